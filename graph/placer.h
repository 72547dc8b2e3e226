// The placer: which device runs each node of a Session's plan. It runs when a plan is built
// (Plan::compile), never while a graph is built or traced, so a graph (and a traced function)
// records only what the user requested and runs on whatever devices a Session has.
//
//   std::vector<Device*> devices = session_devices(options);     // CPU:0..N-1, GPUs
//   std::vector<Device*> where = place_nodes(nodes, needed, devices, options.allow_soft_placement);
//   // where[id]: the device of node id (null where needed[id] is 0)
//
// Note [Placement rules], applied in this order (TensorFlow's placer, colocation_graph.h):
//
//  1. Requests. A node's request is the spec its device scopes merged to when it was built
//     (graph/graph_context.cc, devices/device_spec.h: inner fields override outer ones; a device
//     function such as replica_device_setter, graph/device_functions.h, adds its own). A request
//     may be partial: a device matches it when every field the request sets equals the
//     device's ("/job:localhost/device:CPU:*" matches every local CPU; "/job:ps" matches no
//     device of this process).
//  2. Colocation. A variable and every node bound to it (its VarHandleOp, ReadVariableOp,
//     AssignVariableOp, AssignAdd/AssignSubVariableOp: its initializer, reads, assigns and
//     optimizer updates) form one group, placed as one node, on the device where the variable
//     lives. The group's request is the variable node's; when that one is empty, the members'
//     requests merged in creation order (a member that conflicts with the merge so far is
//     ignored). A read or update built under another device scope still runs where its variable
//     lives; its value reaches its consumers through a _Send/_Recv pair (Note [Partitions]).
//     TensorFlow's colocation attr joins groups too: a node whose "_class" lists "loc:@X"
//     (Node::colocate_with, read by import_graph_def) is placed with X's group, X's request
//     taking precedence over its own (the group's request: its VarHandleOps' requests, then
//     those of the nodes named in "loc:@", merged; the members' only when those are empty).
//     X need not run in this step. Nodes that name an X the graph lacks are placed together, as
//     TensorFlow keys a group by that name (import rejects such an X: InvalidArgumentError
//     "expects to be colocated with unknown node", as TensorFlow's import does). to_graph_def
//     writes "_class" on the reads, assigns and updates of a variable ("loc:@<its handle>") and
//     on every node with colocate_with, as TensorFlow writes it (Note [Colocation groups]).
//  3. Kernels. A node can run only on a device with a kernel for its op and dtype (the kernel
//     registry, devices/kernel_registry.h); a group only where all of its members can. The ops
//     the executor runs itself (Placeholder, Const, NoOp, Print, the variable ops, views such as
//     Reshape) run on any device.
//  4. Soft placement. When no device both matches the request and has a kernel, and
//     SessionOptions::allow_soft_placement is set, the request is dropped: the best device
//     (rule 5) of the requested type that has a kernel, else the best device that has one.
//  5. The best device. Of the devices left, the best: GPUs before CPUs (as TensorFlow, "if you
//     have a GPU and a CPU available, and the operation has a GPU implementation, TensorFlow
//     will choose the GPU"), then the lowest index (the Session's device order). So an
//     unrequested node runs on GPU:0 where there is one, else CPU:0.
//  6. Failure. Otherwise the run fails before anything runs with an InvalidArgumentError that
//     names the op, the node and its user line, what was requested, the devices present and
//     the devices that have a kernel for it (and the group, for a colocated node).
//
// log_device_placement prints placement_log_line for every placed node, in node order.
#pragma once

#include <string>
#include <vector>

#include "devices/device.h"
#include "graph/graph.h"
#include "graph/session_types.h"

namespace tapeflow {

// The devices a Session with `options` places on, in order: CPU:0 .. CPU:N-1 (N =
// device_count["CPU"], default 1; devices missing from the process are made here), then the
// GPUs present (at most device_count["GPU"], default all). InvalidArgumentError for a CPU
// count below 1 or above 64, or an unknown device type.
std::vector<Device*> session_devices(const SessionOptions& options);

// Places every node whose needed[id] is set (rules 1-6 above): returns one device per node id,
// null for the others. `nodes` is the graph's snapshot (nodes[id]->id == id). Throws
// InvalidArgumentError (rule 6); places nothing then.
std::vector<Device*> place_nodes(const std::vector<const Node*>& nodes, const std::vector<char>& needed,
                                 const std::vector<Device*>& devices, bool allow_soft_placement);

// "name: (Type): /job:localhost/replica:0/task:0/device:CPU:1", TensorFlow's format.
std::string placement_log_line(const Node& node, const Device& device);

// True for the ops the executor runs itself (graph-only ops and views): no kernel needed.
bool runs_without_kernel(const Node& node);
// The dtype that selects the node's kernel (its kernel-dtype input's, else output 0's).
DType kernel_dtype(const Node& node, const std::vector<const Node*>& nodes);

}  // namespace tapeflow
