#!/usr/bin/env bash
# Packs into .gpu/ (git-ignored; name it in the device tool's `carry`) what a bare GPU machine lacks
# for scripts/gpu_smat_study.sh: Debian's -dev packages of the build and their runtime libraries
# (.debs, unpacked there by scripts/cuda_build.sh), the packaged encoder all-MiniLM-L6-v2 with its
# weights stored as float16 (45 MB instead of 90: what travels is at most 64 MiB; salient reads F16
# tensors into float32, so the encoder differs from the packaged one by float16 rounding, a relative
# 2^-11 per weight), SST-2's files and the study an earlier GPU run brought back.
#   scripts/gpu_pack.sh        → .gpu/ (about 52 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
ENC=models/pretrained/all-minilm-l6-v2
[ -d "$ENC" ] || scripts/fetch_pretrained.sh all-minilm-l6-v2
rm -rf .gpu
mkdir -p .gpu/debs .gpu/shared/data
(cd .gpu/debs && apt-get download -q nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libutf8proc-dev libutf8proc2 \
  libpng-dev libpng16-16 zlib1g-dev 2> /dev/null)
cp -r "$ENC" .gpu/all-minilm-l6-v2
/usr/bin/python3 - "$ENC/model.safetensors" .gpu/all-minilm-l6-v2/model.safetensors <<'PY'
# safetensors: an 8-byte little-endian header length, a JSON header (dtype, shape, data_offsets
# per tensor), then the data. F32 tensors are rewritten as F16; every other one is copied.
import json, struct, sys
import numpy as np
src, dst = sys.argv[1:]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]
out_header, chunks, offset = {}, [], 0
for name, t in header.items():
    if name == "__metadata__":
        out_header[name] = t
        continue
    b, e = t["data_offsets"]
    blob = data[b:e]
    dtype = t["dtype"]
    if dtype == "F32":
        half = np.frombuffer(blob, dtype="<f4").astype("<f2")
        assert np.isfinite(half).all(), f"{name}: beyond float16's range"
        blob = half.tobytes()
        dtype = "F16"
    out_header[name] = {"dtype": dtype, "shape": t["shape"], "data_offsets": [offset, offset + len(blob)]}
    chunks.append(blob)
    offset += len(blob)
head = json.dumps(out_header, separators=(",", ":")).encode()
head += b" " * (-len(head) % 8)
with open(dst, "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head)
    for c in chunks:
        f.write(c)
PY
cp -r "$SHARED/data/sst2_glue" .gpu/shared/data/
# The study a GPU run brought back (runs/smat-minilm-gpu, else its committed copy without the split,
# which the run makes again): the next run adds its missing runs.
STUDY=runs/smat-minilm-gpu
if [ -d "$STUDY/study" ]; then
  tar czf .gpu/smat-minilm-gpu.tar.gz "$STUDY/split" "$STUDY/study" "$STUDY"/teacher_*.json
else
  cp docs/results/smat-minilm-gpu.tar.gz .gpu/
fi
du -sh .gpu
