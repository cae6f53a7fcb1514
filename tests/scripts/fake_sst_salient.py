#!/usr/bin/env python3
"""A recording stand-in for `salient sst train | evaluate`, for tests of scripts/sst_experiments.sh's
bookkeeping (which runs it trains, skips, evaluates and trains again), not of SST itself: each
call is appended to $FAKE_LOG, `train` writes the files a finished run has (weights, a one-epoch
sst.json whose validation accuracy follows the options), `evaluate` needs the model's weights and
writes run.json and table.md."""
import json
import os
import sys

args = sys.argv[1:]
if args[:1] == ["--threads"]:
    args = args[2:]
args = [a for a in args if a != "--quiet"]
assert args[0] == "sst", args
command, rest = args[1], args[2:]


def option(name, default=None):
    return rest[rest.index(name) + 1] if name in rest else default


with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
out = option("-o")
os.makedirs(out, exist_ok=True)
if command == "train":
    lr, xi = float(option("--lr")), float(option("--xi", "0"))
    # the standards: at chance but for 5e-5, as ERASER seed 13's, and 1e-4 among the image rates
    accuracy = (0.73 if lr == 5e-5 else 0.9 if lr == 1e-4 else 0.5) if option("--masking") == "none" else 0.5 + 1000 * xi
    os.makedirs(f"{out}/last", exist_ok=True)
    for path in (f"{out}/model.safetensors", f"{out}/last/model.safetensors"):
        open(path, "w").write("weights")
    epoch = {"epoch": 1, "val_loss": 0.7, "val_accuracy": accuracy, "val_faithfulness": 0.96, "val_size": 0.3}
    objective = {"masking": option("--masking"), "xi": xi, "lambda": 1.0, "straight_through": False}
    json.dump({"objective": objective, "best_epoch": 1, "history": [epoch]}, open(f"{out}/sst.json", "w"))
    print(json.dumps({"best_epoch": 1, "val_accuracy": accuracy}))
elif command == "evaluate":
    model = option("--model") or option("--standard")
    if not os.path.exists(f"{model}/model.safetensors"):
        sys.exit(f"--model: '{model}' has no weights")
    json.dump(rest, open(f"{out}/run.json", "w"))
    open(f"{out}/table.md", "w").write(f"| {option('--methods')} | {model} |\n")
else:
    sys.exit(f"fake salient: no '{command}'")
