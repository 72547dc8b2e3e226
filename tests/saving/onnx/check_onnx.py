"""Runs onnx.checker (full_check) on every model in a directory and checks the opset and IR."""
import glob
import os
import sys

import onnx

models = sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx")))
if not models:
    sys.exit("check_onnx: no .onnx files in " + sys.argv[1])
for path in models:
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    opsets = {o.domain: o.version for o in model.opset_import}
    assert opsets == {"": 17}, opsets
    assert model.ir_version == 8, model.ir_version
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    print(f"check_onnx: {os.path.basename(path)}: valid (onnx {onnx.__version__}, "
          f"{len(model.graph.node)} nodes, {len(inferred.graph.value_info)} inferred values)")
