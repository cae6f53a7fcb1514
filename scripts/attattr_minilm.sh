#!/usr/bin/env bash
# AttAttr's head importance and pruning curves on the pre-trained backbone (issue #47): models
# fine-tuned from the packaged MiniLM (6 layers x 12 heads) with several seeds (seed 13 is
# models/<task>-minilm of `INIT=minilm scripts/train_models.sh`, seed N another run of the same
# recipe into models/<task>-minilm-sN, made here when missing). For each model: `attattr heads`
# (the paper's settings: 200 dev examples, gold class, m = 20, left Riemann rule) and `attattr
# prune` (dev accuracy with 0%, 10%, ... 100% of the 72 heads removed in each ordering, and the
# last layer's top-k heads) and `attattr triggers` (the paper's adversarial patterns), then one
# table of the pruning curves per task over the seeds (scripts/prune_table.py).
# Resumable: a finished model, score file or curve is not redone.
#   scripts/attattr_minilm.sh [sst2] [hatexplain]        (default: sst2)
# env: SEEDS ("13 14 15"), THREADS (2), BIN (build/salient), STEPS ("heads prune triggers"; e.g.
#      STEPS=triggers mines and transfers the patterns of seeds whose curves an earlier session made)
# Outputs: runs/attattr/<task>-minilm[-sN]/{heads.json,prune.json,prune.md,prune.svg,triggers.json,triggers.md},
# runs/attattr/<task>-minilm-seeds.md; each model's triggers-from-sN.json (seed N's patterns on it) and
# runs/attattr/<task>-minilm-triggers-transfer.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
THREADS=${THREADS:-2}
SEEDS=${SEEDS:-13 14 15}
STEPS=${STEPS:-heads prune triggers}
for step in $STEPS; do
  case $step in heads|prune|triggers) ;; *) echo "STEPS: unknown step '$step' (heads, prune, triggers)" >&2; exit 2 ;; esac
done
has_step() { [[ " $STEPS " == *" $1 "* ]]; }
tasks=("$@")
[ ${#tasks[@]} -eq 0 ] && tasks=(sst2)
for t in "${tasks[@]}"; do
  case $t in sst2|hatexplain) ;; *) echo "unknown task '$t' (sst2, hatexplain)" >&2; exit 2 ;; esac
done
for s in $SEEDS; do
  [[ $s =~ ^[0-9]+$ ]] || { echo "SEEDS: '$s' is not a seed (non-negative integers)" >&2; exit 2; }
done
mkdir -p runs/attattr
for t in "${tasks[@]}"; do
  case $t in sst2) dev=sst2:dev ;; hatexplain) dev=hatexplain:val ;; esac
  dirs=() named=()
  declare -A model_of=()
  for s in $SEEDS; do
    suffix=-minilm
    [ "$s" = 13 ] || suffix=-minilm-s$s
    model=models/$t$suffix
    [ -f "$model/model.safetensors" ] ||
      SEED=$s SUFFIX=$suffix INIT=minilm BIN=$BIN THREADS=$THREADS scripts/train_models.sh "$t"
    out=runs/attattr/$t$suffix
    mkdir -p "$out"
    { ! has_step heads && ! has_step prune; } || [ -f "$out/heads.json" ] ||
      "$BIN" --threads "$THREADS" --quiet attattr heads --model "$model" --data "$dev" --out "$out/heads.json"
    last=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['num_hidden_layers'] - 1)" "$model/config.json")
    ! has_step prune || [ -f "$out/prune.json" ] ||
      "$BIN" --threads "$THREADS" --quiet attattr prune --model "$model" --heads "$out/heads.json" --eval-data "$dev" \
        --layer "$last" --out "$out/prune.json" --svg "$out/prune.svg" --markdown "$out/prune.md"
    # Adversarial triggers (the paper's section 4.3): patterns mined from 500 training examples
    # (m = 64), each inserted into the dev examples of the class it attacks.
    ! has_step triggers || [ -f "$out/triggers.json" ] ||
      "$BIN" --threads "$THREADS" --quiet attattr triggers --model "$model" --train "$t:train" --dev "$dev" \
        --out "$out/triggers.json" --markdown "$out/triggers.md"
    dirs+=("$out")
    named+=("s$s=$out")
    model_of[s$s]=$model
    echo "$t seed $s: $out"
  done
  if has_step prune; then
    python3 scripts/prune_table.py "minilm=$(IFS=,; echo "${dirs[*]}")" > "runs/attattr/$t-minilm-seeds.md"
    echo "$t: runs/attattr/$t-minilm-seeds.md"
  fi
  # Do the patterns transfer? Each seed's patterns evaluated on every other seed's model.
  if has_step triggers && [ ${#named[@]} -gt 1 ]; then
    for src in "${named[@]}"; do
      for dst in "${named[@]}"; do
        [ "$src" = "$dst" ] && continue
        from=${dst#*=}/triggers-from-${src%%=*}.json
        [ "$from" -nt "${src#*=}/triggers.json" ] ||  # redone when those patterns were mined again
          "$BIN" --threads "$THREADS" --quiet attattr triggers --model "${model_of[${dst%%=*}]}" \
            --patterns "${src#*=}/triggers.json" --dev "$dev" --out "$from"
      done
    done
    python3 scripts/trigger_transfer_table.py "${named[@]}" > "runs/attattr/$t-minilm-triggers-transfer.md"
    echo "$t: runs/attattr/$t-minilm-triggers-transfer.md"
  fi
done
