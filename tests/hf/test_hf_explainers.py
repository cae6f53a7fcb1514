"""salient's explainers on the real pre-trained encoder (a classifier salient fine-tuned from the
packaged all-MiniLM-L6-v2: 6 layers x 12 heads) against references computed on Hugging Face's
BertForSequenceClassification of the same checkpoint, with HF's own attention maps and autograd:

- the attention family by its authors' definitions: the formulas below are the ones
  bench/reference_explainers.py checks against the authors' code (Chefer et al.'s
  Transformer-Explainability and Transformer-MM-Explainability, AttCAT, Mask-LRP) on the fixture
  model, where they agree to float64 precision; here they run on real weights;
- the gradient family against Captum 0.8 (saliency, gradient x input) on HF's word embeddings.

The LRP family (lrp_*, transformer_attribution, mgae) needs the authors' relevance-propagating
layers and stays checked on the fixture only (tests/test_reference_values.cpp)."""
import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")  # run.sh skips first, with the reason, when absent
import salient  # noqa: E402

TEXTS = ["a charming and moving journey",
         "the plot is thin and the jokes fall flat , and nobody seems to care",
         "not bad at all, actually quite charming 🤗",  # [UNK]
         ("an intelligent script", "but the pacing drags in the second half")]  # a pair: token types 1


def encodings(model):
    return model.tokenize(TEXTS)


def hf_pass(hf, enc):
    """HF forward and backward for one unpadded input: attention maps, block inputs (hidden_states[b]
    feeds block b) and their gradients for the predicted class's logit."""
    ids = torch.tensor([enc["ids"]])
    types = torch.tensor([enc["type_ids"]])
    with torch.enable_grad():
        out = hf(input_ids=ids, token_type_ids=types, attention_mask=torch.ones_like(ids),
                 output_attentions=True, output_hidden_states=True)
        for t in out.attentions + out.hidden_states:
            t.retain_grad()
        target = int(out.logits[0].argmax())
        out.logits[0, target].backward()
    atts = [a[0].detach().double() for a in out.attentions]           # [heads, L, L] per layer
    grads = [a.grad[0].double() for a in out.attentions]
    hidden = [h[0].detach().double() for h in out.hidden_states]      # [L, d]
    hidden_grads = [h.grad[0].double() for h in out.hidden_states]
    return target, atts, grads, hidden, hidden_grads


def cls_row_without_self(m):
    r = m[0].clone()
    r[0] = 0
    return r


def references(target_and_pass):
    """The attention family's token scores by the authors' definitions (see the module docstring)."""
    _, A, G, H, HG = target_and_pass
    L = A[0].shape[-1]
    ref = {}
    ref["raw_attention"] = cls_row_without_self(A[-1].mean(0))  # Chefer's generate_attn_last_layer
    joint = None                                                 # Chefer's compute_rollout_attention
    for a in A:
        a = a.mean(0) + torch.eye(L, dtype=a.dtype)
        a = a / a.sum(-1, keepdim=True)
        joint = a if joint is None else a @ joint
    ref["rollout"] = cls_row_without_self(joint)
    ref["attention_mean"] = torch.stack([a.mean(dim=(0, 1)) for a in A]).mean(0)  # mean attention probability
    ref["attention_mean_last"] = A[-1].mean(dim=(0, 1))
    gc = (A[-1] * G[-1].mean(dim=(1, 2), keepdim=True)).mean(0).clamp(min=0)  # Chefer's generate_attn_gradcam
    if gc.max() > gc.min():
        ref["attention_gradcam"] = cls_row_without_self((gc - gc.min()) / (gc.max() - gc.min()))
    R = torch.eye(L, dtype=A[0].dtype)  # MM-Explainability's self-attention rule
    for a, g in zip(A, G):
        R = R + (g * a).clamp(min=0).mean(0) @ R
    ref["gae"] = cls_row_without_self(R)
    cam = G[-1].mean(dim=(0, 1)).clamp(min=0)  # Mask-LRP's generate_gradcam
    cam[0] = 0
    ref["cam"] = cam
    ref["attcat"] = sum((HG[b] * H[b]).sum(-1) * A[b].mean(0).mean(0) for b in range(len(A)))  # AttCAT's TransCAM
    return ref


# The gradients are of the predicted class's logit, as the authors' code takes them.
ATTENTION_FAMILY = ["raw_attention", "rollout", "attention_mean", "attention_mean_last", "attention_gradcam", "gae",
                    "cam", "attcat"]


@pytest.mark.parametrize("batch_size", [1, 4])
def test_attention_family_matches_the_authors_definitions_on_real_weights(fine_tuned, hf_classifier, batch_size):
    m = salient.load(fine_tuned)
    encs = encodings(m)
    assert any(100 in e["ids"] for e in encs) and any(1 in e["type_ids"] for e in encs)
    passes = [hf_pass(hf_classifier, e) for e in encs]
    refs = [references(p) for p in passes]
    targets = [p[0] for p in passes]
    checked = 0
    for method in ATTENTION_FAMILY:
        # batch_size 4 pads the shorter inputs: padding must change nothing.
        ours = salient.explain(m, TEXTS, method=method, output="logit", batch_size=batch_size)
        for text, ex, ref, target in zip(TEXTS, ours, refs, targets):
            assert ex.target == target
            if method not in ref:  # a constant GradCAM map: the reference divides 0 by 0
                continue
            r = ref[method].numpy()
            s = np.asarray(ex.scores, dtype=np.float64)
            assert s.shape == r.shape, (method, text)
            err = np.abs(s - r).max() / max(np.abs(r).max(), 1e-12)
            assert err < 2e-4, f"{method} on {text!r}: relative error {err:.2e}"
            checked += 1
    assert checked >= 30


def test_gradient_family_matches_captum_on_hf(fine_tuned, hf_classifier):
    """Saliency (L2 norm of the gradient) and gradient x input on the word embeddings, for the
    predicted class's probability, against Captum's layer methods on HF's model."""
    from captum.attr import LayerGradientXActivation

    def prob(ids, types, mask):
        return hf_classifier(input_ids=ids, token_type_ids=types, attention_mask=mask).logits.softmax(-1)

    layer = hf_classifier.bert.embeddings.word_embeddings
    gxa = LayerGradientXActivation(prob, layer)                            # grad x embedding
    grad_only = LayerGradientXActivation(prob, layer, multiply_by_inputs=False)  # the gradient itself
    m = salient.load(fine_tuned)
    sal = salient.explain(m, TEXTS, method="saliency", output="prob")
    gxi = salient.explain(m, TEXTS, method="grad_x_input", output="prob")
    for e, s, g in zip(encodings(m), sal, gxi):
        ids, types = torch.tensor([e["ids"]]), torch.tensor([e["type_ids"]])
        mask = torch.ones_like(ids)
        with torch.enable_grad():
            target = int(prob(ids, types, mask).argmax())
            ref_gxi = gxa.attribute(ids, target=target, additional_forward_args=(types, mask)).sum(-1)[0]
            ref_sal = grad_only.attribute(ids, target=target, additional_forward_args=(types, mask)).norm(dim=-1)[0]
        for name, ours, ref in (("saliency", s, ref_sal), ("grad_x_input", g, ref_gxi)):
            ref = ref.detach().numpy()
            err = np.abs(np.asarray(ours.scores) - ref).max() / np.abs(ref).max()
            assert err < 1e-4, f"{name}: relative error {err:.2e}"


def test_gradient_family_at_the_embedding_output_matches_captum_on_hf(fine_tuned, hf_classifier):
    """layer="embeddings": saliency, gradient x input and IG at the embedding layer's output
    (HF's hidden_states[0], where SMaT's authors take theirs) against Captum's layer methods on
    bert.embeddings; IG from the [PAD] baseline, whose embedding output Captum forms from the
    baseline ids as salient does."""
    from captum.attr import LayerGradientXActivation, LayerIntegratedGradients

    def logit(ids, types, mask):
        return hf_classifier(input_ids=ids, token_type_ids=types, attention_mask=mask).logits

    layer = hf_classifier.bert.embeddings
    gxa = LayerGradientXActivation(logit, layer)
    grad_only = LayerGradientXActivation(logit, layer, multiply_by_inputs=False)
    lig = LayerIntegratedGradients(logit, layer)
    m = salient.load(fine_tuned)
    kw = dict(output="logit", layer="embeddings")
    sal = salient.explain(m, TEXTS, method="saliency", **kw)
    gxi = salient.explain(m, TEXTS, method="grad_x_input", **kw)
    ig = salient.explain(m, TEXTS, method="ig", steps=20, baseline="pad", **kw)
    word = salient.explain(m, TEXTS, method="grad_x_input", output="logit")
    for e, s, g, i, w in zip(encodings(m), sal, gxi, ig, word):
        ids, types = torch.tensor([e["ids"]]), torch.tensor([e["type_ids"]])
        mask = torch.ones_like(ids)
        structural = torch.tensor([[t in (101, 102) for t in e["ids"]]])
        base = torch.where(structural, ids, torch.zeros_like(ids))  # [PAD] = 0; [CLS]/[SEP] kept
        with torch.enable_grad():
            target = int(logit(ids, types, mask).argmax())
            args = (types, mask)
            ref_gxi = gxa.attribute(ids, target=target, additional_forward_args=args).sum(-1)[0]
            ref_sal = grad_only.attribute(ids, target=target, additional_forward_args=args).norm(dim=-1)[0]
            ref_ig = lig.attribute(ids, base, target=target, additional_forward_args=args, n_steps=20).sum(-1)[0]
        assert s.target == target
        for name, ours, ref in (("saliency", s, ref_sal), ("grad_x_input", g, ref_gxi), ("ig", i, ref_ig)):
            ref = ref.detach().double().numpy()
            err = np.abs(np.asarray(ours.scores) - ref).max() / np.abs(ref).max()
            assert err < 1e-4, f"{name} at the embedding output: relative error {err:.2e}"
        # A different site, not the word embeddings' scores under another name.
        assert np.abs(np.asarray(g.scores) - np.asarray(w.scores)).max() > 1e-3 * np.abs(np.asarray(w.scores)).max()
