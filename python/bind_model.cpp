// salient.Model: loading, forward, tokenize, predict, explain, memory estimates, faithfulness,
// AttAttr and evaluation (include/salient/salient.h).
#include "bindings.h"

namespace salient_python {

void bind_model(py::module_& m) {
  py::class_<salient::Model>(m, "Model")
      .def_static(
          "load", [](const std::string& dir) { return salient::Model::load(dir); }, py::arg("path"),
          py::call_guard<ComputeScope>())
      .def_property_readonly("labels", &salient::Model::labels)
      .def_property_readonly("has_task_head", &salient::Model::has_task_head)
      .def(
          "forward",
          [](const salient::Model& self, const py::handle& texts, bool hidden_states, bool attentions, int max_length,
             int64_t batch_size) {
            const auto inputs = to_inputs(texts);
            salient::ForwardOutputs o;
            {
              ComputeScope release;
              std::vector<salient::Encoding> encs;
              for (const auto& in : inputs) encs.push_back(self.tokenize(in, max_length));
              o = self.forward(encs, hidden_states, attentions, batch_size);
            }
            py::dict d;
            d["input_ids"] = to_numpy(o.input_ids);
            d["token_type_ids"] = to_numpy(o.token_type_ids);
            d["attention_mask"] = to_numpy(o.attention_mask);
            d["logits"] = o.logits.defined() ? py::object(to_numpy(o.logits)) : py::object(py::none());
            py::list hs, at;
            for (const auto& t : o.hidden_states) hs.append(to_numpy(t));
            for (const auto& t : o.attentions) at.append(to_numpy(t));
            d["hidden_states"] = py::tuple(hs);
            d["attentions"] = py::tuple(at);
            return d;
          },
          py::arg("texts"), py::arg("output_hidden_states") = true, py::arg("output_attentions") = true,
          py::arg("max_length") = 0, py::arg("batch_size") = 32)
      .def_property_readonly("config", [](const salient::Model& self) { return to_python(self.config_json()); })
      .def(
          "tokenize",
          [](const salient::Model& self, const py::handle& texts, int max_length) {
            const auto inputs = to_inputs(texts);
            std::vector<salient::Encoding> encs;
            {
              ComputeScope release;
              for (const auto& in : inputs) encs.push_back(self.tokenize(in, max_length));
            }
            py::list out;
            for (const auto& e : encs) out.append(encoding_dict(e));
            return out;
          },
          py::arg("texts"), py::arg("max_length") = 0)
      .def(
          "predict",
          [](const salient::Model& self, const py::handle& texts, int64_t batch_size, bool windows, int64_t stride) {
            const auto inputs = to_inputs(texts);
            std::vector<salient::Prediction> preds;
            {
              ComputeScope release;
              preds = self.predict(inputs, batch_size, {windows, stride});
            }
            py::list out;
            for (const auto& p : preds) out.append(to_python(p.to_json()));
            return out;
          },
          py::arg("texts"), py::arg("batch_size") = 32, py::arg("windows") = false, py::arg("stride") = 0)
      .def(
          "explain",
          [](const salient::Model& self, const py::handle& texts, const std::string& method, const py::dict& params,
             const std::string& target, const std::string& output, int64_t batch_size, uint64_t seed, bool windows,
             int64_t stride, int64_t max_batch_tokens) {
            const auto inputs = to_inputs(texts);
            const json p = to_json(params, "params");
            std::vector<salient::Explanation> ex;
            {
              ComputeScope release;
              ex = self.explain(inputs, method, p, target, output, batch_size, seed, {windows, stride}, max_batch_tokens);
            }
            py::list out;
            for (const auto& e : ex) out.append(to_python(e.to_json()));
            return out;
          },
          py::arg("texts"), py::arg("method"), py::arg("params") = py::dict(), py::arg("target") = "pred",
          py::arg("output") = "", py::arg("batch_size") = 8, py::arg("seed") = 0, py::arg("windows") = false,
          py::arg("stride") = 0, py::arg("max_batch_tokens") = 4096)
      .def(
          "memory_estimate",
          [](const salient::Model& self, int64_t tokens, const std::string& method, const py::dict& params,
             int64_t max_batch_tokens) {
            return to_python(self.memory_estimate(tokens, method, to_json(params, "params"), max_batch_tokens).to_json());
          },
          py::arg("tokens"), py::arg("method"), py::arg("params") = py::dict(), py::arg("max_batch_tokens") = 4096)
      .def(
          "faithfulness",
          [](const salient::Model& self, const py::handle& text, const std::vector<double>& token_scores, int64_t target,
             const std::string& output, int64_t k, const std::string& removal, bool windows, int64_t stride,
             const std::string& aopc_bins) {
            const salient::TextInput in = to_input(text, 0);
            return computed([&] {
              return self.faithfulness(in, token_scores, target, output, k, removal, salient::LongInputs{windows, stride},
                                       aopc_bins);
            });
          },
          py::arg("text"), py::arg("token_scores"), py::arg("target"), py::arg("output") = "prob", py::arg("k") = 0,
          py::arg("removal") = "mask", py::arg("windows") = false, py::arg("stride") = 0, py::arg("aopc_bins") = "deciles")
      .def(
          "attattr",
          [](const salient::Model& self, const py::handle& text, const std::string& target,
             const std::vector<int64_t>& layers, int m, const std::string& rule, double max_batch_mb) {
            const salient::TextInput in = to_input(text, 0);
            return computed([&] { return self.attattr(in, target, {layers, m, rule, max_batch_mb}); });
          },
          py::arg("text"), py::arg("target") = "pred", py::arg("layers") = std::vector<int64_t>{}, py::arg("m") = 20,
          py::arg("rule") = "left", py::arg("max_batch_mb") = 2048.0)
      .def(
          "attattr_tree",
          [](const salient::Model& self, const py::handle& text, const std::string& target, double tau, int m,
             const std::string& rule) {
            const salient::TextInput in = to_input(text, 0);
            return computed([&] { return self.attattr_tree(in, target, tau, {{}, m, rule, 2048.0}); });
          },
          py::arg("text"), py::arg("target") = "pred", py::arg("tau") = 0.4, py::arg("m") = 20, py::arg("rule") = "left")
      .def(
          "attattr_heads",
          [](const salient::Model& self, const std::string& data, int64_t limit, const std::string& target, int m,
             const std::string& rule, const std::string& data_dir, uint64_t seed) {
            return computed([&] { return self.attattr_heads(data, limit, target, {{}, m, rule, 2048.0}, data_dir, seed); });
          },
          py::arg("data"), py::arg("limit") = 200, py::arg("target") = "gold", py::arg("m") = 20, py::arg("rule") = "left",
          py::arg("data_dir") = "", py::arg("seed") = 0)
      .def(
          "attattr_prune",
          [](const salient::Model& self, const std::string& eval_data, const py::handle& head_scores, int steps,
             int64_t layer, const std::string& data, int64_t limit, const std::string& target, int m,
             const std::string& rule, const std::string& data_dir, uint64_t seed) {
            const json scores = to_json(head_scores, "heads");
            return computed([&] {
              return self.attattr_prune(eval_data, scores, steps, layer, data, limit, target, {{}, m, rule, 2048.0}, data_dir,
                                        seed);
            });
          },
          py::arg("eval_data"), py::arg("heads"), py::arg("steps") = 10, py::arg("layer") = -1, py::arg("data") = "sst2:dev",
          py::arg("limit") = 200, py::arg("target") = "gold", py::arg("m") = 20, py::arg("rule") = "left",
          py::arg("data_dir") = "", py::arg("seed") = 0)
      .def(
          "evaluate",
          [](const salient::Model& self, const std::string& data, const std::string& data_dir, int64_t batch_size,
             int64_t max_length) {
            return computed([&] { return self.evaluate(data, data_dir, batch_size, max_length); });
          },
          py::arg("data"), py::arg("data_dir") = "", py::arg("batch_size") = 64, py::arg("max_length") = 0);
}

}  // namespace salient_python
