//===- ShapeExprTest.cpp - The metadata's shape-expression grammar
//---------===//
#include "qct/runtime/ShapeExpr.h"
#include "qct/runtime/Error.h"

#include <gtest/gtest.h>

#include <functional>

using namespace qct::rt;

namespace {
std::int64_t ev(const std::string &e, std::int64_t M, std::int64_t K,
                std::int64_t G,
                std::map<std::string, std::int64_t> knobs = {}) {
  return ShapeExpr::parse(e, knobs).eval(Dims{M, K, G});
}

qct_status statusOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const RuntimeError &e) {
    return e.status;
  }
  return QCT_OK;
}
} // namespace

TEST(ShapeExpr, ArithmeticAndPrecedence) {
  EXPECT_EQ(ev("M", 5, 7, 2), 5);
  EXPECT_EQ(ev("K/2", 5, 8, 0), 4);
  EXPECT_EQ(ev("M+G*127", 1000, 0, 4), 1508);
  EXPECT_EQ(ev("(M+G)*2", 3, 0, 1), 8);
  EXPECT_EQ(ev("M-K-G", 10, 3, 2), 5); // left associative
  EXPECT_EQ(ev("K/4/2", 0, 16, 0), 2);
  EXPECT_EQ(ev(" 2 * ( M + 1 ) ", 4, 0, 0), 10);
}

TEST(ShapeExpr, Functions) {
  EXPECT_EQ(ev("cdiv(M,128)", 129, 0, 0), 2);
  EXPECT_EQ(ev("cdiv(M,128)", 128, 0, 0), 1);
  EXPECT_EQ(ev("cdiv(M,128)", 0, 0, 0), 0);
  EXPECT_EQ(ev("rup(M,4)", 5, 0, 0), 8);
  EXPECT_EQ(ev("min(M,K)", 5, 3, 0), 3);
  EXPECT_EQ(ev("max(M,K)", 5, 3, 0), 5);
  EXPECT_EQ(ev("cdiv(M+G*127,128)+G", 1000, 0, 4), 16);
}

TEST(ShapeExpr, KnobsAreBoundAtParse) {
  EXPECT_EQ(ev("cdiv(K,QCT_TILE_K)", 0, 7168, 0, {{"QCT_TILE_K", 128}}), 56);
  ShapeExpr e = ShapeExpr::parse("QCT_THREADS", {{"QCT_THREADS", 256}});
  EXPECT_EQ(e.vars(), 0u);
  EXPECT_EQ(e.eval(Dims{}), 256);
}

TEST(ShapeExpr, InexactDivisionIsAnError) {
  EXPECT_EQ(statusOf([] { ev("K/2", 0, 7, 0); }), QCT_ERR_VALIDATION);
  EXPECT_EQ(statusOf([] { ev("K/0", 0, 7, 0); }), QCT_ERR_VALIDATION);
}

TEST(ShapeExpr, OverflowIsAnError) {
  EXPECT_EQ(statusOf([] { ev("M*M", 4000000000LL, 0, 0); }),
            QCT_ERR_VALIDATION);
}

TEST(ShapeExpr, SyntaxErrorsNameTheExpression) {
  for (const char *bad :
       {"", "M+", "(M", "cdiv(M)", "M K", "N", "M % 2", "rup(M,4"}) {
    try {
      ShapeExpr::parse(bad, {});
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const RuntimeError &e) {
      EXPECT_EQ(e.status, QCT_ERR_METADATA) << bad;
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ShapeExpr, SolvesForAVariable) {
  std::int64_t v = -1;
  EXPECT_TRUE(solveFor(ShapeExpr::parse("K/2", {}), 1, 3584, Dims{}, v));
  EXPECT_EQ(v, 7168);
  EXPECT_TRUE(solveFor(ShapeExpr::parse("G+1", {}), 2, 5, Dims{}, v));
  EXPECT_EQ(v, 4);
  EXPECT_TRUE(solveFor(ShapeExpr::parse("M", {}), 0, 0, Dims{}, v));
  EXPECT_EQ(v, 0);
  // cdiv(K,2) = 3 for K = 5 and 6: the smallest is chosen.
  EXPECT_TRUE(solveFor(ShapeExpr::parse("cdiv(K,2)", {}), 1, 3, Dims{}, v));
  EXPECT_EQ(v, 5);
  // No K with 2*K == 7.
  EXPECT_FALSE(solveFor(ShapeExpr::parse("K*2", {}), 1, 7, Dims{}, v));
  EXPECT_FALSE(solveFor(ShapeExpr::parse("G+1", {}), 2, 0, Dims{}, v));
}
