// The vision transformer (include/salient/vision.h): train, evaluate, explain.
#include "bindings.h"
#include "salient/vision.h"

namespace salient_python {

void bind_vision(py::module_& m) {
  // The vision transformer (docs/vit.md): `salient vit train | evaluate | explain`.
  {
    const salient::vision::VitTrainOptions d;
    m.def(
        "vit_train",
        [](const std::string& data, const std::string& dev, const std::string& out, const std::string& data_dir,
           int64_t patch_size, int64_t hidden, int64_t layers, int64_t heads, int64_t intermediate, double dropout,
           double attention_dropout, int epochs, int64_t batch_size, double lr, double weight_decay, double warmup,
           double clip, double max_minutes, int64_t max_train_examples, uint64_t seed, bool resume, int stop_after_epoch) {
          salient::vision::VitTrainOptions o;
          o.train_data = data;
          o.dev_data = dev;
          o.output_dir = out;
          o.data_dir = data_dir;
          o.patch_size = patch_size;
          o.hidden_size = hidden;
          o.num_layers = layers;
          o.num_heads = heads;
          o.intermediate_size = intermediate;
          o.dropout = dropout;
          o.attention_dropout = attention_dropout;
          o.epochs = epochs;
          o.batch_size = batch_size;
          o.lr = lr;
          o.weight_decay = weight_decay;
          o.warmup_ratio = warmup;
          o.clip_norm = clip;
          o.max_minutes = max_minutes;
          o.max_train_examples = max_train_examples;
          o.seed = seed;
          o.resume = resume;
          o.stop_after_epoch = stop_after_epoch;
          return computed([&] { return salient::vit_train(o); });
        },
        py::arg("data"), py::arg("dev"), py::arg("out"), py::arg("data_dir") = "", py::arg("patch_size") = d.patch_size,
        py::arg("hidden") = d.hidden_size, py::arg("layers") = d.num_layers, py::arg("heads") = d.num_heads,
        py::arg("intermediate") = d.intermediate_size, py::arg("dropout") = d.dropout,
        py::arg("attention_dropout") = d.attention_dropout, py::arg("epochs") = d.epochs,
        py::arg("batch_size") = d.batch_size, py::arg("lr") = d.lr, py::arg("weight_decay") = d.weight_decay,
        py::arg("warmup") = d.warmup_ratio, py::arg("clip") = d.clip_norm, py::arg("max_minutes") = d.max_minutes,
        py::arg("max_train_examples") = d.max_train_examples, py::arg("seed") = d.seed, py::arg("resume") = d.resume,
        py::arg("stop_after_epoch") = d.stop_after_epoch);
  }
  m.def(
      "vit_evaluate",
      [](const std::string& model, const std::string& data, const std::string& data_dir, int64_t limit) {
        return computed([&] { return salient::vit_evaluate(model, data, data_dir, limit); });
      },
      py::arg("model"), py::arg("data"), py::arg("data_dir") = "", py::arg("limit") = 0);
  {
    const salient::VitExplainOptions d;
    m.def(
        "vit_explain",
        [](const std::string& model, const std::string& data, const std::string& method, const std::string& smat,
           const std::string& data_dir, const std::string& png_dir, int64_t limit, int64_t steps, int scale) {
          salient::VitExplainOptions o;
          o.method = method;
          o.smat_file = smat;
          o.data_dir = data_dir;
          o.png_dir = png_dir;
          o.limit = limit;
          o.steps = steps;
          o.scale = scale;
          std::vector<json> images;
          {
            ComputeScope release;
            images = salient::vit_explain(model, data, o);
          }
          py::list out;
          for (const auto& j : images) out.append(to_python(j));
          return out;
        },
        py::arg("model"), py::arg("data"), py::arg("method") = d.method, py::arg("smat") = d.smat_file,
        py::arg("data_dir") = "", py::arg("png_dir") = "", py::arg("limit") = d.limit, py::arg("steps") = d.steps,
        py::arg("scale") = d.scale);
  }
}

}  // namespace salient_python
