// tapeflow-repl's input handling (tools/repl/cell.cc): which inputs are declarations,
// statements or expressions, and the rewrites of Note [REPL cells]. Plain string code, so this
// is built and run even where clang's interpreter library (and so the REPL) is missing.
#include "cell.h"

#include <gtest/gtest.h>

namespace tapeflow_repl {
namespace {

TEST(ReplCellTest, ClassifiesDeclarationsStatementsAndExpressions) {
  EXPECT_EQ(classify("  "), CellKind::kEmpty);
  EXPECT_EQ(classify("// just a comment"), CellKind::kEmpty);
  EXPECT_EQ(classify("%who"), CellKind::kCommand);
  EXPECT_EQ(classify("#include <vector>"), CellKind::kDirective);
  EXPECT_EQ(classify("Tensor a = {{1.f, 2.f}};"), CellKind::kDeclaration);
  EXPECT_EQ(classify("auto f = function([](const Tensor& x) { return x; });"), CellKind::kDeclaration);
  EXPECT_EQ(classify("std::vector<Tensor> v;"), CellKind::kDeclaration);
  EXPECT_EQ(classify("const Tensor& r = a;"), CellKind::kDeclaration);
  EXPECT_EQ(classify("Variable w(random_normal({3, 1}), \"w\");"), CellKind::kDeclaration);
  EXPECT_EQ(classify("Tensor sq(const Tensor& x) { return x * x; }"), CellKind::kDeclaration);
  EXPECT_EQ(classify("struct P { int x; };"), CellKind::kDeclaration);
  EXPECT_EQ(classify("a = a + 1;"), CellKind::kStatement);
  EXPECT_EQ(classify("std::cout << a << std::endl;"), CellKind::kStatement);
  EXPECT_EQ(classify("f(a);  // a comment"), CellKind::kStatement);
  EXPECT_EQ(classify("{ GradientTape t; }"), CellKind::kStatement);
  EXPECT_EQ(classify("for (int i = 0; i < 3; ++i) { f(a); }"), CellKind::kStatement);
  EXPECT_EQ(classify("a + 1"), CellKind::kExpression);
  EXPECT_EQ(classify("a.shape()  // why"), CellKind::kExpression);
  EXPECT_EQ(classify("Tensor{1.f, 2.f}"), CellKind::kExpression);
  EXPECT_EQ(classify("a < b"), CellKind::kExpression);
}

TEST(ReplCellTest, ReadsMoreLinesWhileABracketOrLiteralIsOpen) {
  EXPECT_TRUE(needs_more("auto f = function([](const Tensor& x) {\n"));
  EXPECT_TRUE(needs_more("Tensor a = {{1.f, 2.f},\n"));
  EXPECT_FALSE(needs_more("std::cout << \"{\" << std::endl;\n"));
  EXPECT_FALSE(needs_more("a + 1  // (\n"));
  EXPECT_FALSE(needs_more("Tensor a = {{1.f}};\n"));
}

TEST(ReplCellTest, AutoDeclarationsBecomeInlineAndLoseTopLevelCaptureDefaults) {
  EXPECT_EQ(rewrite_declaration("auto f = function([&](const Tensor& x) { return x * w; });"),
            "inline auto f = function([](const Tensor& x) { return x * w; });");
  EXPECT_EQ(rewrite_declaration("const auto g = function([ = ](const Tensor& x) { return x; });"),
            "inline const auto g = function([](const Tensor& x) { return x; });");
  // A lambda inside a lambda's body is local: its capture-default stays.
  EXPECT_EQ(rewrite_declaration("auto h = function([](const Tensor& x) { auto k = [&] { return x; }; return k(); });"),
            "inline auto h = function([](const Tensor& x) { auto k = [&] { return x; }; return k(); });");
  EXPECT_EQ(rewrite_declaration("Tensor a = b[0];"), "Tensor a = b[0];");
  EXPECT_EQ(rewrite_declaration("static auto s = 1;"), "static auto s = 1;");
  EXPECT_EQ(rewrite_declaration("auto [p, q] = std::pair(1, 2);"), "auto [p, q] = std::pair(1, 2);");
  EXPECT_EQ(rewrite_declaration("const auto& [p, q] = pq;"), "const auto& [p, q] = pq;");
  EXPECT_EQ(rewrite_declaration("std::string t = \"[&]\";"), "std::string t = \"[&]\";");
}

TEST(ReplCellTest, WrappedCellsKeepTheUsersLineNumbers) {
  std::string stmt = wrap_statement("f(a);", 3);
  EXPECT_NE(stmt.find("void __tf_cell_3() {\n#line 1\nf(a);\n"), std::string::npos) << stmt;
  EXPECT_NE(stmt.find("::tapeflow_repl::run(&__tf_cell_3);"), std::string::npos) << stmt;
  std::string expr = wrap_expression("a + 1", 4);
  EXPECT_NE(expr.find("::tapeflow_repl::show(((\n#line 1\na + 1\n), ::tapeflow_repl::Marker{}));"),
            std::string::npos)
      << expr;
}

}  // namespace
}  // namespace tapeflow_repl
