//===- qct/runtime/ShapeExpr.h - The metadata's shape expressions -*- C++
//-*-===//
//
// Grammar (docs/kernel-abi.md):
//   expr   := term (('+' | '-') term)*
//   term   := factor (('*' | '/') factor)*      '/' exact (error if inexact)
//   factor := INT | NAME | '(' expr ')' | ('cdiv'|'rup'|'min'|'max') '(' expr
//   ',' expr ')'
// Names are M, K, G or a schedule knob. Expressions are parsed once, when a
// kernel is loaded (knobs are bound then), and evaluated on every launch, so
// evaluation is a walk over a small flat node array with no allocation.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_SHAPEEXPR_H
#define QCT_RUNTIME_SHAPEEXPR_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qct::rt {

/// The launch-time variables.
struct Dims {
  std::int64_t M = 0, K = 0, G = 0;
};

class ShapeExpr {
public:
  ShapeExpr() = default;
  /// Parses `text`; names other than M, K, G must be in `knobs` (their values
  /// are folded in). Throws RuntimeError(QCT_ERR_METADATA) on a syntax error
  /// or an unknown name.
  static ShapeExpr parse(const std::string &text,
                         const std::map<std::string, std::int64_t> &knobs);

  /// Exact evaluation; an inexact '/', a division by zero or an overflow
  /// throws RuntimeError(QCT_ERR_VALIDATION) naming the expression.
  std::int64_t eval(const Dims &d) const;
  /// Like eval, but '/' floors and never throws on inexact division; used to
  /// solve for M / K from a source shape by bisection.
  bool evalRelaxed(const Dims &d, std::int64_t &out) const;

  /// Which of M, K, G occur (bit 0 M, bit 1 K, bit 2 G).
  unsigned vars() const { return vars_; }
  const std::string &text() const { return text_; }

private:
  enum class Op : std::uint8_t {
    Const,
    M,
    K,
    G,
    Add,
    Sub,
    Mul,
    Div,
    Cdiv,
    Rup,
    Min,
    Max
  };
  struct Node {
    Op op;
    std::int64_t value; // Const
  };
  // Postfix (RPN) order: evaluation is a stack machine.
  std::vector<Node> nodes_;
  std::string text_;
  unsigned vars_ = 0;
  friend class ExprParser;
  template <bool Strict> bool run(const Dims &d, std::int64_t &out) const;
};

/// Solves for the smallest value v >= 0 of variable `var` (0 M, 1 K, 2 G)
/// with expr(v) == target, the others taken from `d`. False if none.
bool solveFor(const ShapeExpr &expr, int var, std::int64_t target, Dims d,
              std::int64_t &out);

} // namespace qct::rt

#endif // QCT_RUNTIME_SHAPEEXPR_H
