"""Predict and explain one text from Python.

    python3 examples/python/explain.py MODEL_DIR TEXT [METHOD]   (METHOD: default ig)
"""
import sys

import salient

if len(sys.argv) not in (3, 4):
    sys.exit("usage: explain.py MODEL_DIR TEXT [METHOD]")
model = salient.load(sys.argv[1])
text = sys.argv[2]
prediction = model.predict([text])[0]
print(f"prediction: {prediction.label} (p = {prediction.probs[prediction.label_id]:.4f})")
explanation = salient.explain(model, text, method=sys.argv[3] if len(sys.argv) == 4 else "ig")[0]
print(f"method: {explanation.method}, explaining {explanation.target_label}")
for word, score in zip(explanation.words, explanation.word_scores):
    print(f"{word}\t{score:+.6f}")
