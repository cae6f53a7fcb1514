"""The vision transformer (docs/vit.md) from Python: a ViT in Hugging Face's
ViTForImageClassification layout trained from scratch on Fashion-MNIST or MNIST, evaluated, and
explained per patch, as ``salient vit train | evaluate | explain``.

    import salient
    salient.vit.train("fashion-mnist:train", "fashion-mnist:val", "models/vit-fashion", epochs=5)
    salient.vit.evaluate("models/vit-fashion", "fashion-mnist:test")      # {"accuracy": ...}
    salient.vit.explain("models/vit-fashion", "fashion-mnist:test", method="rollout", limit=4)
"""
import os as _os

from . import _salient

__all__ = ["train", "evaluate", "explain"]


def train(data, dev, out, **options):
    """Trains a ViT into ``out`` (the best dev accuracy's model; ``out/checkpoint`` for
    ``resume=True``). Options, as the CLI's flags: patch_size, hidden, layers, heads, intermediate,
    dropout, attention_dropout, epochs, batch_size, lr, weight_decay, warmup, clip, max_minutes,
    max_train_examples, seed, resume, stop_after_epoch, data_dir. Returns best_epoch,
    best_dev_accuracy, train_seconds and out."""
    return _salient.vit_train(data, dev, _os.fspath(out), **options)


def evaluate(model, data="fashion-mnist:test", limit=0, data_dir=""):
    """Accuracy of a ViT on the first ``limit`` images (0: all) of ``data``: a dict with model, data,
    examples and accuracy."""
    return _salient.vit_evaluate(_os.fspath(model), data, data_dir, limit)


def explain(model, data="fashion-mnist:test", method="attention_mean", limit=8, steps=32, smat=None, png_dir=None,
            scale=8, data_dir=""):
    """Patch scores of the first ``limit`` images: ``method`` attention_mean or rollout (attention),
    saliency, grad_x_input or ig (``steps`` points; gradients of the predicted class's probability
    w.r.t. the patch embeddings), or smat (a learned head mix, ``smat``: the file of ``salient smat
    train | study``). One dict per image: index, label, prediction, probability, method,
    patch_size, patch_scores (rows × columns of patches); with ``png_dir`` also an overlay PNG per
    image there (``png``)."""
    return _salient.vit_explain(_os.fspath(model), data, method, _os.fspath(smat) if smat else "", data_dir,
                                _os.fspath(png_dir) if png_dir else "", limit, steps, scale)
