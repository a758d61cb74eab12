//===- ShapeExpr.cpp - Parse and evaluate shape expressions
//----------------===//
#include "qct/runtime/ShapeExpr.h"

#include "qct/runtime/Error.h"

#include <cctype>

namespace qct::rt {

class ExprParser {
public:
  ExprParser(const std::string &text,
             const std::map<std::string, std::int64_t> &knobs, ShapeExpr &out)
      : s_(text), knobs_(knobs), out_(out) {}

  void run() {
    expr();
    skip();
    if (pos_ != s_.size())
      error("unexpected '" + s_.substr(pos_, 1) + "'");
  }

private:
  using Op = ShapeExpr::Op;
  const std::string &s_;
  const std::map<std::string, std::int64_t> &knobs_;
  ShapeExpr &out_;
  std::size_t pos_ = 0;

  [[noreturn]] void error(const std::string &what) {
    fail(QCT_ERR_METADATA, "shape expression '" + s_ + "': " + what +
                               " at column " + std::to_string(pos_ + 1));
  }
  void skip() {
    while (pos_ < s_.size() &&
           std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c))
      error(std::string("expected '") + c + "'");
  }
  void emit(Op op, std::int64_t v = 0) { out_.nodes_.push_back({op, v}); }

  void expr() {
    term();
    for (;;) {
      if (eat('+')) {
        term();
        emit(Op::Add);
      } else if (eat('-')) {
        term();
        emit(Op::Sub);
      } else
        return;
    }
  }
  void term() {
    factor();
    for (;;) {
      if (eat('*')) {
        factor();
        emit(Op::Mul);
      } else if (eat('/')) {
        factor();
        emit(Op::Div);
      } else
        return;
    }
  }
  void factor() {
    skip();
    if (pos_ >= s_.size())
      error("unexpected end");
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      expr();
      expect(')');
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      while (pos_ < s_.size() &&
             std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        int digit = s_[pos_++] - '0';
        if (v > (INT64_MAX - digit) / 10)
          error("integer too large");
        v = v * 10 + digit;
      }
      emit(Op::Const, v);
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
              s_[pos_] == '_'))
        ++pos_;
      std::string name = s_.substr(start, pos_ - start);
      Op fn = Op::Const;
      if (name == "cdiv")
        fn = Op::Cdiv;
      else if (name == "rup")
        fn = Op::Rup;
      else if (name == "min")
        fn = Op::Min;
      else if (name == "max")
        fn = Op::Max;
      if (fn != Op::Const) {
        expect('(');
        expr();
        expect(',');
        expr();
        expect(')');
        emit(fn);
        return;
      }
      if (name == "M") {
        emit(Op::M);
        out_.vars_ |= 1;
        return;
      }
      if (name == "K") {
        emit(Op::K);
        out_.vars_ |= 2;
        return;
      }
      if (name == "G") {
        emit(Op::G);
        out_.vars_ |= 4;
        return;
      }
      auto it = knobs_.find(name);
      if (it == knobs_.end()) {
        pos_ = start;
        error("unknown name '" + name + "' (not M, K, G or a schedule knob)");
      }
      emit(Op::Const, it->second);
      return;
    }
    error(std::string("unexpected '") + c + "'");
  }
};

ShapeExpr ShapeExpr::parse(const std::string &text,
                           const std::map<std::string, std::int64_t> &knobs) {
  ShapeExpr e;
  e.text_ = text;
  ExprParser(text, knobs, e).run();
  return e;
}

template <bool Strict>
bool ShapeExpr::run(const Dims &d, std::int64_t &out) const {
  std::int64_t stack[32];
  int sp = 0;
  auto bad = [&](const char *why) -> bool {
    if (Strict)
      fail(QCT_ERR_VALIDATION, "shape expression '" + text_ +
                                   "' with M=" + std::to_string(d.M) +
                                   " K=" + std::to_string(d.K) +
                                   " G=" + std::to_string(d.G) + ": " + why);
    return false;
  };
  for (const Node &n : nodes_) {
    if (n.op <= Op::G) {
      if (sp == 32)
        return bad("expression too deep");
      stack[sp++] = n.op == Op::Const ? n.value
                    : n.op == Op::M   ? d.M
                    : n.op == Op::K   ? d.K
                                      : d.G;
      continue;
    }
    std::int64_t b = stack[--sp], a = stack[--sp], r = 0;
    switch (n.op) {
    case Op::Add:
      if (__builtin_add_overflow(a, b, &r))
        return bad("overflow");
      break;
    case Op::Sub:
      if (__builtin_sub_overflow(a, b, &r))
        return bad("overflow");
      break;
    case Op::Mul:
      if (__builtin_mul_overflow(a, b, &r))
        return bad("overflow");
      break;
    case Op::Div:
      if (b == 0)
        return bad("division by zero");
      if (Strict && a % b != 0)
        return bad(
            ("inexact division " + std::to_string(a) + "/" + std::to_string(b))
                .c_str());
      r = a / b;
      if (!Strict && (a % b != 0) && ((a < 0) != (b < 0)))
        --r;
      break;
    case Op::Cdiv:
    case Op::Rup:
      if (b <= 0)
        return bad("cdiv/rup by a non-positive value");
      r = a >= 0 ? (a / b + (a % b != 0)) : -((-a) / b);
      if (n.op == Op::Rup && __builtin_mul_overflow(r, b, &r))
        return bad("overflow");
      break;
    case Op::Min:
      r = a < b ? a : b;
      break;
    case Op::Max:
      r = a > b ? a : b;
      break;
    default:
      return bad("internal: bad node");
    }
    stack[sp++] = r;
  }
  out = stack[0];
  return true;
}

std::int64_t ShapeExpr::eval(const Dims &d) const {
  std::int64_t out = 0;
  run<true>(d, out);
  return out;
}

bool ShapeExpr::evalRelaxed(const Dims &d, std::int64_t &out) const {
  return run<false>(d, out);
}

bool solveFor(const ShapeExpr &expr, int var, std::int64_t target, Dims d,
              std::int64_t &out) {
  auto at = [&](std::int64_t v, std::int64_t &r) {
    (var == 0 ? d.M : var == 1 ? d.K : d.G) = v;
    return expr.evalRelaxed(d, r);
  };
  auto exact = [&](std::int64_t v) {
    (var == 0 ? d.M : var == 1 ? d.K : d.G) = v;
    try {
      return expr.eval(d) == target;
    } catch (const RuntimeError &) {
      return false;
    }
  };
  // Fast path (every launch solves M and K): most shape expressions are
  // linear in the variable (M, K/2, G+1), so interpolate between two points
  // and accept the guess if it is exact and its predecessor falls short.
  constexpr std::int64_t kFar = 1 << 20;
  std::int64_t f0 = 0, fFar = 0, prev = 0;
  if (at(0, f0) && at(kFar, fFar) && fFar > f0 && target >= f0) {
    __int128 g = (__int128(target - f0) * kFar) / (fFar - f0);
    if (g >= 0 && g <= INT64_MAX) {
      std::int64_t guess = std::int64_t(g);
      if (exact(guess) &&
          (guess == 0 || (at(guess - 1, prev) && prev < target))) {
        out = guess;
        return true;
      }
    }
  }
  // Shape expressions are non-decreasing in each variable; find the smallest
  // v with f(v) >= target by bisection, then require an exact, strict match.
  std::int64_t lo = 0, hi = 1, r = 0;
  while (true) {
    if (!at(hi, r))
      return false;
    if (r >= target)
      break;
    if (hi > (INT64_MAX >> 2))
      return false;
    hi *= 2;
  }
  while (lo < hi) {
    std::int64_t mid = lo + (hi - lo) / 2;
    if (!at(mid, r))
      return false;
    if (r >= target)
      hi = mid;
    else
      lo = mid + 1;
  }
  if (!exact(lo))
    return false;
  out = lo;
  return true;
}

} // namespace qct::rt
