#!/usr/bin/env bash
# The masked-LM loss and accuracy of the best predictor that ignores context (docs/results/pretraining.md):
# at a [MASK] it can only give the pieces' unigram distribution; at a chosen piece left visible
# (10% unchanged, 10% a random ordinary piece) it sees that piece and nothing else. An encoder
# whose held-out MLM loss and accuracy sit at these values has learned nothing from context.
# The piece frequencies come from a seeded sample of the corpus's lines, tokenized by salient.
#   scripts/mlm_context_free_floor.sh [CORPUS=models/corpus/corpus.txt] [LINES=100000]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/salient}
SHARED=${SALIENT_SHARED:-$(cd .. && pwd)/shared}
CORPUS=${1:-models/corpus/corpus.txt}
LINES=${2:-100000}
VOCAB=$SHARED/data/bert_base_uncased_tokenizer
[ -f "$CORPUS" ] || { echo "CORPUS: '$CORPUS' not found (salient corpus build writes it)" >&2; exit 2; }
[[ $LINES =~ ^[1-9][0-9]*$ ]] || { echo "LINES: must be a positive integer (got '$LINES')" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shuf -n "$LINES" --random-source=<(yes 13) "$CORPUS" > "$tmp/sample.txt"
"$BIN" --quiet tokenize --tokenizer "$VOCAB" -i "$tmp/sample.txt" -o "$tmp/sample.jsonl"
/usr/bin/python3 - "$tmp/sample.jsonl" "$VOCAB/vocab.txt" <<'PY'
import collections, json, math, sys
counts = collections.Counter()
for line in open(sys.argv[1]):
    counts.update(json.loads(line)["ids"][1:-1])  # without [CLS] and [SEP]
vocab = [t.rstrip("\n") for t in open(sys.argv[2], encoding="utf-8")]
# Replacements are drawn uniformly from the ordinary pieces: every piece not written [LIKE_THIS].
ordinary = [i for i, t in enumerate(vocab) if not (len(t) > 2 and t[0] == "[" and t[-1] == "]")]
n = sum(counts.values())
p = {i: c / n for i, c in counts.items()}
u = 1.0 / len(ordinary)
entropy = -sum(q * math.log(q) for q in p.values())
top = max(p.values())
# Visible piece x at a chosen position: the label is x with weight p(x) (left unchanged), or any
# piece y with weight u·p(y) (x was a random replacement).
def posterior_of_x(x):
    return (p.get(x, 0.0) * (1 + u)) / (p.get(x, 0.0) + u)
predicts_x = lambda x: p.get(x, 0.0) * (1 + u) >= u * top  # else the most frequent piece wins
loss_unchanged = sum(q * -math.log(posterior_of_x(x)) for x, q in p.items())
acc_unchanged = sum(q for x, q in p.items() if predicts_x(x))
# Random replacement x (uniform over the ordinary pieces), label t ~ p independent of it.
loss_random = entropy + sum(u * math.log((p.get(x, 0.0) + u) / u) for x in ordinary)
acc_random = sum(u * (p.get(x, 0.0) if predicts_x(x) else top) for x in ordinary)
loss = 0.8 * entropy + 0.1 * loss_unchanged + 0.1 * loss_random
accuracy = 0.8 * top + 0.1 * acc_unchanged + 0.1 * acc_random
print(json.dumps({"pieces": n, "distinct_pieces": len(counts), "unigram_entropy": round(entropy, 4),
                  "most_frequent_share": round(top, 4), "context_free_loss": round(loss, 4),
                  "context_free_accuracy": round(accuracy, 4)}))
PY
