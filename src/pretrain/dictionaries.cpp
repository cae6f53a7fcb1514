#include "pretrain/dictionaries.h"

#include <cctype>
#include <cstring>
#include <map>

#include "util/error.h"
#include "util/io.h"

namespace salient::pretrain {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string collapse_whitespace(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

int count_words(const std::string& s) {
  int n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool sp = std::isspace(static_cast<unsigned char>(c));
    if (!sp && !in_word) ++n;
    in_word = !sp;
  }
  return n;
}

bool all_alpha(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalpha(static_cast<unsigned char>(c))) return false;
  return true;
}

// GCIDE writes accented and special characters as short bracketed codes: a mark before the letter
// ([e'] is not used; ['e], [=a], [~n], [.a], ["o], [,c]), a caret after it ([a^], [oo^]), a suffix
// ([aum] umlaut, [imac] macron), ligatures ([ae], [oe]) and names ([eth], [deg], [alpha]).
// Letters keep their base form: the corpus is for an uncased ASCII-heavy vocabulary. Codes not
// known here are editorial brackets ([R.], [Obs.], [1913 Webster]) and dropped with their content.
bool gcide_entity(const std::string& code, std::string& out) {
  static const std::map<std::string, std::string> named = {
      {"ae", "ae"},      {"AE", "AE"},      {"oe", "oe"},      {"OE", "OE"},       {"eth", "th"},
      {"thorn", "th"},   {"th", "th"},      {"yogh", "y"},     {"ng", "ng"},       {"add", "a"},
      {"asl", "a"},      {"udd", "u"},      {"dsdot", "d"},    {"zdot", "z"},      {"lsdot", "l"},
      {"deg", "\u00b0"}, {"sect", "\u00a7"}, {"pounds", "\u00a3"}, {"times", "\u00d7"}, {"root", "\u221a"},
      {"middot", "\u00b7"}, {"para", "\u00b6"}, {"dagger", "\u2020"}, {"dag", "\u2020"}, {"div", "\u00f7"},
      {"divby", "\u00f7"}, {"ldqo", "\""},  {"rdqo", "\""},    {"nbsp", " "},      {"sharp", "\u266f"},
      {"flat", "\u266d"}, {"alpha", "alpha"}, {"beta", "beta"}, {"gamma", "gamma"}, {"Gamma", "Gamma"},
      {"delta", "delta"}, {"Delta", "Delta"}, {"epsilon", "epsilon"}, {"eta", "eta"}, {"theta", "theta"},
      {"iota", "iota"},  {"kappa", "kappa"}, {"lambda", "lambda"}, {"Lambda", "Lambda"}, {"mu", "mu"},
      {"nu", "nu"},      {"omicron", "omicron"}, {"pi", "pi"}, {"Pi", "Pi"},        {"rho", "rho"},
      {"sigma", "sigma"}, {"tau", "tau"},   {"upsilon", "upsilon"}, {"Upsilon", "Upsilon"}, {"phi", "phi"},
      {"chi", "chi"},    {"Chi", "Chi"},    {"digamma", "digamma"}};
  const auto it = named.find(code);
  if (it != named.end()) {
    out = it->second;
    return true;
  }
  if (code.size() < 2 || code.size() > 3) return false;
  // A mark then one or two letters: ['e], [=oo], [=ae]. Not a letter then '.', which is [R.].
  if (std::strchr("'=~.-\"`*,^", code[0]) && all_alpha(code.substr(1))) {
    out = code.substr(1);
    return true;
  }
  if (code.back() == '^' && all_alpha(code.substr(0, code.size() - 1))) {
    out = code.substr(0, code.size() - 1);
    return true;
  }
  return false;
}

bool gcide_suffix_entity(const std::string& code, std::string& out) {
  // [aum], [oum] (umlaut), [imac] (macron): one letter and a suffix.
  if (code.size() >= 3 && std::isalpha(static_cast<unsigned char>(code[0])) &&
      (code.substr(1) == "um" || code.substr(1) == "mac")) {
    out = code.substr(0, 1);
    return true;
  }
  return false;
}

// "   [1913 Webster] Laic": a source tag followed by a stray headword (about 5,000 in GCIDE 0.48).
bool source_tag_and_word(const std::string& line) {
  const size_t open = line.find_first_not_of(' ');
  if (open == std::string::npos || line[open] != '[') return false;
  const size_t close = line.find(']', open);
  if (close == std::string::npos) return false;
  const std::string tail = collapse_whitespace(line.substr(close + 1));
  return !tail.empty() && tail.find(' ') == std::string::npos;
}

// "   (d[a^]k`t[i^]*l[-o]*th[=e]\"k[.a]), n. [NL., ...": a headword's pronunciation put on the
// next line; its syllable marks (* `) tell it from a definition opening with a parenthesis.
bool pronunciation_line(const std::string& line) {
  const size_t open = line.find_first_not_of(' ');
  if (open == std::string::npos || line[open] != '(') return false;
  const size_t close = line.find(')', open);
  return close != std::string::npos && line.substr(open, close - open).find_first_of("*`") != std::string::npos;
}

// One paragraph (consecutive non-blank lines) of an entry → its text, or "" when nothing is kept.
// Column-0 lines are headword lines and are dropped, but brackets opened there (an etymology that
// runs on) are followed into the indented lines, so their content is dropped too.
std::string gcide_paragraph(const std::vector<std::string>& lines) {
  std::string text;
  int depth = 0, header_parens = 0;
  bool header_runs_on = false, previous_header = false;
  for (const std::string& line : lines) {
    // A headword line starts in column 0; it runs on while a group it opened (a pronunciation
    // "(kav`a*le\"ro)", an etymology "[imp. & p. p. ...") is open, to the end of the closing line.
    const bool header = header_runs_on || !std::isspace(static_cast<unsigned char>(line[0])) ||
                        (previous_header && pronunciation_line(line));
    previous_header = header;
    if (!header && depth == 0 && source_tag_and_word(line)) continue;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '[') {
        const size_t close = line.find(']', i + 1);
        std::string rep;
        if (close != std::string::npos && close - i - 1 <= 7) {
          const std::string code = line.substr(i + 1, close - i - 1);
          if (code.find_first_of(" [") == std::string::npos && (gcide_entity(code, rep) || gcide_suffix_entity(code, rep))) {
            if (!header && depth == 0) text += rep;
            i = close;
            continue;
          }
        }
        ++depth;
        continue;
      }
      if (c == ']') {
        if (depth > 0) --depth;
        continue;
      }
      if (header) {
        if (c == '(') ++header_parens;
        if (c == ')' && header_parens > 0) --header_parens;
        continue;
      }
      if (depth > 0) continue;
      if (c == '\\') {  // a pronunciation \Ab*an"don\ on an indented line
        const size_t end = line.find('\\', i + 1);
        i = end == std::string::npos ? line.size() : end;
        continue;
      }
      if (c == '{' || c == '}') continue;  // cross-reference/italic markup around kept words
      text += c;
    }
    header_runs_on = header && (depth > 0 || header_parens > 0);
    if (!header) header_parens = 0;
    text += ' ';
  }
  text = collapse_whitespace(text);
  // Synonym and antonym lists are word lists, not sentences.
  for (const char* label : {"Syn:", "Syn.", "Ant:", "Antonym:", "Antonyms:", "See also:", "Also See:", "See:"})
    if (starts_with(text, label)) return "";
  for (const char* label : {"Note:", "Usage:"})
    if (starts_with(text, label)) text = collapse_whitespace(text.substr(std::strlen(label)));
  // Sense markers: "2. ", "(a) ", "2. (a) ".
  for (;;) {
    size_t n = 0;
    while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n]))) ++n;
    if (n > 0 && n + 1 < text.size() && text[n] == '.' && text[n + 1] == ' ') {
      text = text.substr(n + 2);
      continue;
    }
    if (text.size() > 4 && text[0] == '(' && std::islower(static_cast<unsigned char>(text[1])) && text[2] == ')' && text[3] == ' ') {
      text = text.substr(4);
      continue;
    }
    break;
  }
  // A quotation's author ("--Shak.", "--Rom. i. 28.") ends it; "-- used" (a dash) does not.
  for (size_t p = text.find("--"); p != std::string::npos; p = text.find("--", p + 2))
    if ((p == 0 || text[p - 1] == ' ') && p + 2 < text.size() && std::isupper(static_cast<unsigned char>(text[p + 2]))) {
      text = collapse_whitespace(text.substr(0, p));
      break;
    }
  // A run-in derived word with its syllable marks ("-- Stra*te\"gic*al*ly, adv.") ends the sense.
  for (size_t p = text.find(" -- "); p != std::string::npos; p = text.find(" -- ", p + 4)) {
    const size_t end = std::min(text.find_first_of(" ,", p + 4), text.size());
    if (text.find_first_of("*`\"", p + 4) < end) {
      text = collapse_whitespace(text.substr(0, p));
      break;
    }
  }
  // Leftover markup (an HTML link; a pronunciation with syllable marks, "(per*kush\"un)", that
  // starts the line after a headword): not clean prose, dropped rather than guessed at.
  if (text.find_first_of("<>|\\*`") != std::string::npos || text.find("href=") != std::string::npos) return "";
  return count_words(text) >= kMinDictionaryWords ? text : "";
}

std::string resolve_source(const char* option, const std::string& value, const char* debian_path,
                           const char* debian_check, const char* package, bool directory) {
  if (value == "none") return "";
  if (value == "auto") {
    if (!file_exists(debian_check))
      fail("{} auto: {} not found (install the Debian package {}; scripts/setup.sh does, or pass {} none)", option,
           debian_check, package, option);
    return debian_path;
  }
  if (value.empty()) fail("{}: expected a {}, 'auto' or 'none'", option, directory ? "directory" : "file");
  if (directory ? !dir_exists(value) : !file_exists(value))
    fail("{}: '{}' is not a {} (expected a {}, 'auto' or 'none')", option, value, directory ? "directory" : "file",
         directory ? "directory" : "file");
  return value;
}

}  // namespace

std::vector<std::string> gcide_texts(const std::string& dict_text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < dict_text.size();) {
    size_t end = dict_text.find('\n', start);
    if (end == std::string::npos) end = dict_text.size();
    std::string line = dict_text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  // dictd's 00-database-* entries (URL, description, GCIDE's license text) come first; the
  // dictionary starts at the first headword line with a pronunciation (\0\, \A*ban"don\).
  size_t first = 0;
  while (first < lines.size() &&
         (lines[first].empty() || std::isspace(static_cast<unsigned char>(lines[first][0])) ||
          starts_with(lines[first], "00-database") || lines[first].find('\\') == std::string::npos))
    ++first;
  std::vector<std::string> out, para;
  auto flush = [&] {
    if (para.empty()) return;
    std::string t = gcide_paragraph(para);
    if (!t.empty()) out.push_back(std::move(t));
    para.clear();
  };
  for (size_t i = first; i < lines.size(); ++i) {
    if (collapse_whitespace(lines[i]).empty())
      flush();
    else
      para.push_back(lines[i]);
  }
  flush();
  return out;
}

std::vector<std::string> read_gcide(const std::string& path) {
  auto texts = gcide_texts(read_gzip_file(path));
  if (texts.empty()) fail("{}: no GCIDE definitions found (expected dictd's gcide.dict.dz)", path);
  return texts;
}

std::vector<std::string> wordnet_glosses(const std::string& data_text) {
  std::vector<std::string> out;
  for (size_t start = 0; start < data_text.size();) {
    size_t end = data_text.find('\n', start);
    if (end == std::string::npos) end = data_text.size();
    const std::string line = data_text.substr(start, end - start);
    start = end + 1;
    if (starts_with(line, "  ")) continue;  // the license header: "  1 This software and database..."
    const size_t bar = line.find(" | ");
    if (bar == std::string::npos) continue;
    std::string gloss = collapse_whitespace(line.substr(bar + 3));
    if (count_words(gloss) >= kMinDictionaryWords) out.push_back(std::move(gloss));
  }
  return out;
}

std::vector<std::string> read_wordnet(const std::string& dir) {
  std::vector<std::string> out;
  for (const char* name : {"data.noun", "data.verb", "data.adj", "data.adv"}) {
    const std::string path = join_path(dir, name);
    if (!file_exists(path)) fail("{}: not found (WordNet's data.noun/verb/adj/adv; Debian package wordnet-base)", path);
    auto glosses = wordnet_glosses(read_file(path));
    if (glosses.empty()) fail("{}: no WordNet glosses (lines with ' | ') found", path);
    out.insert(out.end(), std::make_move_iterator(glosses.begin()), std::make_move_iterator(glosses.end()));
  }
  return out;
}

std::string resolve_gcide(const std::string& value) {
  return resolve_source("--gcide", value, kDebianGcide, kDebianGcide, "dict-gcide", false);
}

std::string resolve_wordnet(const std::string& value) {
  static const std::string noun = join_path(kDebianWordnet, "data.noun");
  return resolve_source("--wordnet", value, kDebianWordnet, noun.c_str(), "wordnet-base", true);
}

}  // namespace salient::pretrain
