#include "cell.h"

#include <array>
#include <cctype>
#include <string>

namespace tapeflow_repl {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Skips a string or character literal, or a comment, starting at s[i]; returns the index past
// it, or i when s[i] starts none of them.
size_t skip_literal(std::string_view s, size_t i) {
  if (s[i] == '"' || s[i] == '\'') {
    char q = s[i];
    for (size_t j = i + 1; j < s.size(); ++j) {
      if (s[j] == '\\') ++j;
      else if (s[j] == q) return j + 1;
    }
    return s.size();
  }
  if (s.substr(i, 2) == "//") {
    size_t e = s.find('\n', i);
    return e == std::string_view::npos ? s.size() : e + 1;
  }
  if (s.substr(i, 2) == "/*") {
    size_t e = s.find("*/", i + 2);
    return e == std::string_view::npos ? s.size() : e + 2;
  }
  return i;
}

std::string_view first_word(std::string_view s) {
  size_t e = 0;
  while (e < s.size() && is_ident(s[e])) ++e;
  return s.substr(0, e);
}

bool one_of(std::string_view w, std::initializer_list<std::string_view> words) {
  for (auto x : words)
    if (w == x) return true;
  return false;
}

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// `Type name ...` with Type a qualified name, maybe with template arguments, '*', '&' or
// const: what C++ would parse as a declaration if Type is a type.
bool looks_like_declaration(std::string_view s) {
  std::string_view w = first_word(s);
  if (one_of(w, {"auto", "const", "constexpr", "constinit", "static", "inline", "extern", "template",
                 "struct", "class", "union", "enum", "namespace", "using", "typedef", "typename",
                 "unsigned", "signed", "int", "float", "double", "char", "bool", "long", "short",
                 "void", "volatile", "thread_local", "size_t", "int64_t", "int32_t", "uint8_t"}))
    return true;
  size_t i = 0;
  if (s.substr(0, 2) == "::") i = 2;
  for (;;) {  // a qualified name, each part maybe with <...>
    if (i >= s.size() || !is_ident_start(s[i])) return false;
    while (i < s.size() && is_ident(s[i])) ++i;
    i = skip_space(s, i);
    if (i < s.size() && s[i] == '<' && s.substr(i, 2) != "<<") {
      int depth = 0;
      for (; i < s.size(); ++i) {
        if (s[i] == '<') ++depth;
        else if (s[i] == '>' && --depth == 0) break;
        else if (s[i] == ';' || s[i] == '{') return false;
      }
      if (i >= s.size()) return false;
      i = skip_space(s, i + 1);
    }
    if (s.substr(i, 2) == "::") {
      i = skip_space(s, i + 2);
      continue;
    }
    break;
  }
  for (;;) {  // declarator punctuation before the name
    i = skip_space(s, i);
    if (i < s.size() && (s[i] == '*' || s[i] == '&')) {
      ++i;
      continue;
    }
    if (s.substr(i, 5) == "const" && (i + 5 == s.size() || !is_ident(s[i + 5]))) {
      i += 5;
      continue;
    }
    break;
  }
  if (i >= s.size() || !is_ident_start(s[i])) return false;
  std::string_view name = first_word(s.substr(i));
  return !one_of(name, {"and", "or", "not", "xor", "bitand", "bitor"});
}

}  // namespace

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// The input with each comment replaced by a space (literals kept).
std::string strip_comments(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = skip_literal(s, i);
    if (j == i) {
      out += s[i++];
    } else {
      if (s[i] == '/') out += ' ';
      else out.append(s.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

CellKind classify(std::string_view input) {
  const std::string code = strip_comments(input);
  std::string_view s = trim(code);
  if (s.empty()) return CellKind::kEmpty;
  if (s[0] == '%') return CellKind::kCommand;
  if (s[0] == '#') return CellKind::kDirective;
  std::string_view w = first_word(s);
  if (s[0] == '{' || one_of(w, {"if", "for", "while", "do", "switch", "try", "throw", "return", "break",
                                "continue", "goto", "delete"}))
    return CellKind::kStatement;
  char last = s.back();
  if (last != ';' && last != '}') return CellKind::kExpression;
  if (looks_like_declaration(s)) return CellKind::kDeclaration;
  return last == ';' ? CellKind::kStatement : CellKind::kExpression;  // `Tensor{1.f, 2.f}`
}

bool needs_more(std::string_view s) {
  int depth = 0;
  for (size_t i = 0; i < s.size();) {
    size_t j = skip_literal(s, i);
    if (j != i) {
      if (j == s.size() && (s[i] == '"' || s[i] == '\'' || s.substr(i, 2) == "/*")) return true;
      i = j;
      continue;
    }
    if (s[i] == '(' || s[i] == '[' || s[i] == '{') ++depth;
    else if (s[i] == ')' || s[i] == ']' || s[i] == '}') --depth;
    ++i;
  }
  return depth > 0;
}

std::string rewrite_declaration(std::string_view input) {
  std::string_view s = trim(input);
  std::string out;
  // Leading specifiers: make an `auto` variable inline unless it says how it is linked.
  bool has_auto = false, linked = false;
  for (size_t i = 0;;) {
    std::string_view w = first_word(s.substr(i));
    if (w.empty()) {
      // A structured binding (`auto [x, y] = ...`) cannot be inline.
      while (i < s.size() && (s[i] == '&' || std::isspace(static_cast<unsigned char>(s[i])))) ++i;
      if (i < s.size() && s[i] == '[') linked = true;
      break;
    }
    if (w == "auto") has_auto = true;
    else if (one_of(w, {"inline", "static", "extern", "constexpr", "thread_local", "template"})) linked = true;
    else if (!one_of(w, {"const", "volatile", "constinit"})) break;
    i = skip_space(s, i + w.size());
  }
  if (has_auto && !linked) out = "inline ";
  int depth = 0;
  for (size_t i = 0; i < s.size();) {
    size_t j = skip_literal(s, i);
    if (j != i) {
      out.append(s.substr(i, j - i));
      i = j;
      continue;
    }
    char c = s[i];
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (c == '[' && depth == 0) {
      size_t k = skip_space(s, i + 1);
      if (k < s.size() && (s[k] == '&' || s[k] == '=')) {
        size_t e = skip_space(s, k + 1);
        if (e < s.size() && s[e] == ']') {
          out += "[]";
          i = e + 1;
          continue;
        }
      }
    }
    out += c;
    ++i;
  }
  return out;
}

std::string wrap_statement(std::string_view input, int n) {
  std::string fn = "__tf_cell_" + std::to_string(n);
  return "void " + fn + "() {\n#line 1\n" + std::string(input) + "\n;}\n::tapeflow_repl::run(&" + fn + ");";
}

// The comma trick: `(expr), Marker{}` calls tapeflow_repl's operator, (which keeps the value)
// when expr has a value, and is the built-in comma (giving a Marker: nothing to print) when
// expr is void.
std::string wrap_expression(std::string_view input, int n) {
  std::string fn = "__tf_cell_" + std::to_string(n);
  return "void " + fn + "() { ::tapeflow_repl::show(((\n#line 1\n" + std::string(input) +
         "\n), ::tapeflow_repl::Marker{})); }\n::tapeflow_repl::run(&" + fn + ");";
}

}  // namespace tapeflow_repl
