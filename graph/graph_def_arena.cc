// GraphDefs parsed into a protobuf arena (graph_def.h: graph_def_from_binary_in_arena,
// read_graph_def_in_arena).
#include <google/protobuf/arena.h>

#include <algorithm>
#include <bit>
#include <filesystem>

#include "core/huge_page_allocator.h"
#include "graph/graph_def.h"

namespace tapeflow {

namespace {

// Note [GraphDefs in an arena]
// Parsed onto the heap, a GraphDef is one heap block per NodeDef, per string and per attr map
// node: a 100k-node GraphDef of 4.3 MB is about 60 MB in some 500k blocks, and a process's
// first parse of it page-faults on every 4 KiB of them (and so does each later one after glibc
// has handed the memory of the last back to the kernel). In an arena the parser lays
// everything out in file order in a few large blocks, and the blocks of 2 MiB and more come
// from huge_page_allocate (core/huge_page_allocator.h): where the kernel backs them with huge
// pages, the 60 MB fault in 30 pieces, not 15,000. Measured on the 2-vCPU Zen 4 (a fresh process
// per load of the bench's 100k-node chain, docs/performance.md, session 27): parse 21-35 ms
// against 50-73 on the heap, parse and import 72-113 ms against 107-137; the arena without huge
// pages was no faster than the heap. In 2 of 11 loads the parse took 135-155 ms, likely the
// kernel compacting memory for the huge pages (THP defrag "madvise"; not verified). Inside one
// process that parses again and again (deploy_bench's BM_GraphDefImportScaling/2 against /3)
// both cost the same at 100k nodes, and the arena 13% less at 10k.
// A block's size doubles from a start of 4 bytes per byte of input (the whole takes about 14
// per byte of wire form) up to kMaxBlock, so a small GraphDef takes one small block.
constexpr size_t kMinBlock = size_t{64} << 10;
constexpr size_t kMaxBlock = size_t{4} << 20;

void* allocate_block(size_t bytes) {
  return bytes >= internal::kHugePageMinBytes ? internal::huge_page_allocate(bytes) : ::operator new(bytes);
}
void deallocate_block(void* p, size_t bytes) {
  if (bytes >= internal::kHugePageMinBytes) internal::huge_page_deallocate(p);
  else ::operator delete(p);
}

// An arena sized for `input_bytes` of wire (or text) form, and an empty GraphDef in it; the
// pointer owns the arena (shared_ptr's aliasing constructor).
std::shared_ptr<GraphDef> new_in_arena(size_t input_bytes) {
  google::protobuf::ArenaOptions options;
  options.start_block_size = std::clamp(std::bit_ceil(std::max<size_t>(input_bytes, 1) * 4), kMinBlock, kMaxBlock);
  options.max_block_size = kMaxBlock;
  options.block_alloc = allocate_block;
  options.block_dealloc = deallocate_block;
  auto arena = std::make_shared<google::protobuf::Arena>(options);
  GraphDef* def = google::protobuf::Arena::CreateMessage<GraphDef>(arena.get());
  return std::shared_ptr<GraphDef>(std::move(arena), def);
}

}  // namespace

std::shared_ptr<const GraphDef> graph_def_from_binary_in_arena(std::string_view bytes, std::source_location loc) {
  std::shared_ptr<GraphDef> def = new_in_arena(bytes.size());
  graph_def_internal::parse_binary_into(*def, bytes, "graph_def_from_binary_in_arena", loc);
  return def;
}

std::shared_ptr<const GraphDef> read_graph_def_in_arena(const std::string& path, std::source_location loc) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);  // a hint for the first block only
  std::shared_ptr<GraphDef> def = new_in_arena(ec ? 0 : static_cast<size_t>(size));
  graph_def_internal::read_file_into(*def, path, loc);
  return def;
}

}  // namespace tapeflow
