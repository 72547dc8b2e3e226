// Runs each case of <dir>/manifest.json (written by onnx_cases) in ONNX Runtime and compares the
// outputs with tapeflow's: same dims, max abs difference <= 1e-5 (integers: equal).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const kTolerance = 1e-5;
const arrays = {float32: Float32Array, int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array};

function toTensor(t) {
  const data = t.dtype === 'int64' ? BigInt64Array.from(t.data, BigInt) : arrays[t.dtype].from(t.data);
  return new ort.Tensor(t.dtype, data, t.dims);
}

async function main() {
  const dir = process.argv[2];
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  let failed = false;
  for (const c of manifest) {
    const session = await ort.InferenceSession.create(path.join(dir, c.model));
    const feeds = {};
    for (const input of c.inputs) feeds[input.name] = toTensor(input);
    const results = await session.run(feeds);
    for (const want of c.outputs) {
      const got = results[want.name];
      let problem = '';
      let maxDiff = 0;
      if (!got) problem = 'missing';
      else if (got.type !== want.dtype) problem = `dtype ${got.type}, want ${want.dtype}`;
      else if (JSON.stringify(Array.from(got.dims)) !== JSON.stringify(want.dims))
        problem = `dims [${got.dims}], want [${want.dims}]`;
      else {
        for (let i = 0; i < want.data.length; ++i) maxDiff = Math.max(maxDiff, Math.abs(Number(got.data[i]) - want.data[i]));
        if (!(maxDiff <= (want.dtype === 'float32' ? kTolerance : 0))) problem = `max abs difference ${maxDiff}`;
      }
      console.log(`run_onnxruntime: ${c.name} ${want.name} [${want.dims}] ${want.dtype}: ` +
                  (problem ? `FAILED: ${problem}` : `max abs difference ${maxDiff.toExponential(2)}`));
      failed = failed || problem !== '';
    }
  }
  console.log(`run_onnxruntime: ONNX Runtime ${ort.env.versions ? JSON.stringify(ort.env.versions) : ''}`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error('run_onnxruntime: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
