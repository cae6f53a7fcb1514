"""Each task's reported number: the metric on the held-out split that never picks the checkpoint.
scripts/train_models.sh evaluates models/<task><suffix> on that split into
runs/test_<task><suffix>.json; the table scripts read the metric back from there.
  held_out.py split TASK        prints the task's held-out data spec
  held_out.py check TASK...     exits 2 with one line naming the first unknown task
"""
import json
import os
import sys

# task -> (held-out data spec, reported metric); GLUE's CoLA test labels are not public, so CoLA
# reports its out-of-domain dev set.
HELD_OUT = {"sst2": ("sst2:test", "accuracy"), "hatexplain": ("hatexplain:test", "macro_f1"),
            "cola": ("cola:ood", "mcc"), "eraser": ("eraser:test", "accuracy")}


def reported(task, suffix):
    """The task's reported metric for models/<task><suffix>, or None when it has not been evaluated."""
    path = f"runs/test_{task}{suffix}.json"
    return json.load(open(path))[HELD_OUT[task][1]] if os.path.exists(path) else None


if __name__ == "__main__":
    command, tasks = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    unknown = [t for t in tasks if t not in HELD_OUT]
    if command not in ("split", "check") or (command == "split" and len(tasks) != 1):
        sys.exit("usage: held_out.py split TASK | check TASK...")
    if unknown:
        print(f"unknown task '{unknown[0]}' ({', '.join(HELD_OUT)})", file=sys.stderr)
        sys.exit(2)
    if command == "split":
        print(HELD_OUT[tasks[0]][0])
