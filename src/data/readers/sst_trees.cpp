// The Stanford Sentiment Treebank's PTB trees: sentences, binary labels with the rationale rule,
// and the sentiment score for regression (docs/datasets.md).
#include "data/dataset.h"
#include <cmath>
#include "data/readers/reader_util.h"
#include "util/io.h"

namespace salient {

using namespace data_detail;

namespace {

// The parser recurses once per level. SST's trees are at most a few dozen levels deep; the bound
// turns a pathological line into an error instead of a stack overflow.
constexpr int kMaxTreeDepth = 1000;

class TreeParser {
 public:
  TreeParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  SstTree parse() {
    SstTree tree;
    skip_space();
    tree.root = parse_node(tree, 1);
    skip_space();
    if (pos_ != s_.size()) error("unexpected text after the end of the tree");
    return tree;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail("{}: {} (column {})", where_, what, pos_ + 1);
  }
  void skip_space() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }

  int parse_node(SstTree& tree, int depth) {
    if (depth > kMaxTreeDepth) error(fmt::format("tree nested deeper than {} levels", kMaxTreeDepth));
    if (pos_ >= s_.size() || s_[pos_] != '(') error("expected '('");
    ++pos_;
    size_t label_begin = pos_;
    while (pos_ < s_.size() && !is_space(s_[pos_]) && s_[pos_] != '(' && s_[pos_] != ')') ++pos_;
    std::string label_text = s_.substr(label_begin, pos_ - label_begin);
    int64_t label = -1;
    if (!parse_int(label_text, label) || label < 0 || label > 4) {
      pos_ = label_begin;
      error(fmt::format("sentiment label {} is not 0..4", quote_for_error(label_text)));
    }
    int index = static_cast<int>(tree.nodes.size());
    tree.nodes.push_back(SstNode{});
    tree.nodes[index].label = static_cast<int>(label);
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '(') {
      // Phrase: exactly two children (the SST trees are binarised).
      int begin = static_cast<int>(tree.words.size());
      int left = parse_node(tree, depth + 1);
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '(') error("phrase node needs two children");
      int right = parse_node(tree, depth + 1);
      skip_space();
      if (pos_ >= s_.size()) error("unbalanced parentheses: missing ')'");
      if (s_[pos_] != ')') error("phrase node has more than two children");
      ++pos_;
      SstNode& node = tree.nodes[index];
      node.left = left;
      node.right = right;
      node.begin = begin;
      node.end = static_cast<int>(tree.words.size());
      return index;
    }
    // Leaf: the word runs to the closing ')'. It may hold inner spaces (train line 1 has "R  ock").
    size_t word_begin = pos_;
    while (pos_ < s_.size() && s_[pos_] != ')' && s_[pos_] != '(') ++pos_;
    if (pos_ >= s_.size()) error("unbalanced parentheses: missing ')'");
    if (s_[pos_] == '(') error("unexpected '(' inside a leaf");
    std::string word = trim(std::string_view(s_).substr(word_begin, pos_ - word_begin));
    if (word.empty()) error("empty leaf");
    ++pos_;
    SstNode& node = tree.nodes[index];
    node.begin = static_cast<int>(tree.words.size());
    node.end = node.begin + 1;
    tree.words.push_back(std::move(word));
    return index;
  }

  const std::string& s_;
  std::string where_;
  size_t pos_ = 0;
};

// PTB escapes back to plain text: -LRB-/-RRB- and the backslash escapes \/ and \*.
std::string unescape_ptb(const std::string& w) {
  if (w == "-LRB-") return "(";
  if (w == "-RRB-") return ")";
  std::string out;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == '\\' && i + 1 < w.size() && (w[i + 1] == '/' || w[i + 1] == '*')) continue;
    out += w[i];
  }
  return out;
}

// Marks the leaves of the minimal agreeing phrases under node n; returns whether n or a node
// below it agrees with the sentence polarity.
bool opposes(const SstNode& node, bool positive) { return positive ? node.label <= 1 : node.label >= 3; }

// Marks the words of node n's span except those inside constituents of the opposite polarity.
void mark_span_except_opposed(const SstTree& tree, int n, bool positive, std::vector<float>& mask) {
  const SstNode& node = tree.nodes[n];
  if (opposes(node, positive)) return;
  if (node.left < 0 && node.right < 0) {
    if (node.begin < 0 || node.end > static_cast<int>(mask.size()) || node.begin > node.end)
      fail("SST tree: node span [{}, {}) outside the {} words", node.begin, node.end, mask.size());
    for (int w = node.begin; w < node.end; ++w) mask[w] = 1.0f;
    return;
  }
  for (int child : {node.left, node.right})
    if (child >= 0) mark_span_except_opposed(tree, child, positive, mask);
}

bool mark_minimal_phrases(const SstTree& tree, int n, bool positive, std::vector<float>& mask) {
  if (n < 0 || n >= static_cast<int>(tree.nodes.size())) fail("SST tree: node index {} out of range", n);
  const SstNode& node = tree.nodes[n];
  // A constituent of the opposite polarity is not descended into: "good" inside a negative
  // "(not good)" does not support a positive sentence.
  if (opposes(node, positive)) return false;
  bool below = false;
  for (int child : {node.left, node.right})
    if (child >= 0 && mark_minimal_phrases(tree, child, positive, mask)) below = true;
  bool here = positive ? node.label >= 3 : node.label <= 1;
  if (here && !below) {
    std::vector<float> span(mask.size(), 0.0f);
    mark_span_except_opposed(tree, n, positive, span);
    // When every word lies in opposed parts ("not (to be moved)" in a positive sentence), the
    // polarity exists only in their composition: the whole phrase is the rationale.
    if (std::count(span.begin(), span.end(), 1.0f) == 0)
      std::fill(span.begin() + node.begin, span.begin() + node.end, 1.0f);
    for (size_t w = 0; w < mask.size(); ++w) mask[w] = std::max(mask[w], span[w]);
  }
  return here || below;
}

}  // namespace

std::vector<SstTree> read_sst_trees(const std::string& path) {
  std::vector<SstTree> trees;
  for (const Line& line : read_lines(read_file(path)))
    trees.push_back(TreeParser(line.text, loc(path, line.no)).parse());
  return trees;
}

// A word is a rationale word when it lies inside a minimal phrase of the sentence's polarity: a
// node (leaf or phrase) whose label has the root's polarity (>= 3 for a positive root, <= 1 for a
// negative one) while no node below it has; the descent stops at nodes of the opposite polarity.
// Neutral roots give all zeros. See docs/datasets.md.
std::vector<float> sst_tree_rationale(const SstTree& tree) {
  std::vector<float> mask(tree.words.size(), 0.0f);
  if (tree.nodes.empty()) return mask;
  if (tree.root < 0 || tree.root >= static_cast<int>(tree.nodes.size()))
    fail("SST tree: root index {} out of range", tree.root);
  int root_label = tree.nodes[tree.root].label;
  if (root_label == 2) return mask;
  mark_minimal_phrases(tree, tree.root, root_label > 2, mask);
  return mask;
}

Dataset sst_trees_to_binary(const std::vector<SstTree>& trees, bool with_rationales) {
  Dataset ds;
  ds.name = "sst-trees";
  ds.label_names = {"negative", "positive"};
  for (size_t t = 0; t < trees.size(); ++t) {
    const SstTree& tree = trees[t];
    if (tree.nodes.empty()) continue;
    int root_label = tree.nodes[tree.root].label;
    if (root_label == 2) continue;  // SST-2 drops neutral sentences
    Record r;
    r.id = std::to_string(t);  // index of the tree in its file
    r.label = root_label > 2 ? 1 : 0;
    std::vector<float> leaf_mask = sst_tree_rationale(tree);
    // A leaf holding whitespace (one train leaf is "R  ock") becomes several words, each with
    // the leaf's rationale value, so words and rationale stay aligned.
    std::vector<std::string> words;
    for (size_t i = 0; i < tree.words.size(); ++i)
      for (auto& w : split_whitespace(unescape_ptb(tree.words[i]))) {
        words.push_back(std::move(w));
        if (with_rationales) r.rationale.push_back(leaf_mask[i]);
      }
    r.text = join_words(words);
    ds.records.push_back(std::move(r));
  }
  return ds;
}

Dataset sst_trees_to_scores(const std::vector<SstTree>& trees) {
  Dataset ds;
  ds.name = "sst-trees-score";
  for (size_t t = 0; t < trees.size(); ++t) {
    const SstTree& tree = trees[t];
    if (tree.nodes.empty()) continue;
    Record r;
    r.id = std::to_string(t);
    r.target = tree.nodes[tree.root].label / 4.0;
    std::vector<std::string> words;
    for (const auto& leaf : tree.words)
      for (auto& w : split_whitespace(unescape_ptb(leaf))) words.push_back(std::move(w));
    r.text = join_words(words);
    ds.records.push_back(std::move(r));
  }
  return ds;
}

}  // namespace salient
