//===- KernelPlan.h - The lowered kernel, as the emitters read it ---------===//
//
// What the CUDA emitter and the metadata writer print, read off the lowered
// qct IR (after qct-pipeline): the kernel family, its knobs and, per output,
// the device library's Out<...> parameters. Plain C++ (the spec's enums), so
// the two emitters do not depend on MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_TARGET_KERNELPLAN_H
#define QCT_TARGET_KERNELPLAN_H

#include "qct/Spec/KernelSpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::qct {
class KernelOp;
} // namespace mlir::qct

namespace qct {

/// docs/device-library.md: `row_kernel` (row outputs only) or `tile_kernel`
/// (a col output, through a shared-memory tile).
enum class KernelFamily { Row, Tile };

/// A schedule knob: a preprocessor name, its legal values and default.
struct Knob {
  std::string name;
  std::vector<int64_t> values;
  int64_t defaultValue = 0;
};

/// A schedule rule: a schedule with `ifName` = `ifValue` must give
/// `thenName` one of `thenValues` (the legal schedules are the knobs'
/// product less those that break a rule).
struct KnobRule {
  std::string ifName;
  int64_t ifValue = 0;
  std::string thenName;
  std::vector<int64_t> thenValues;
};

/// One output, in the device library's Out<F, L, Block, Scale, SL, Path>.
struct OutputPlan {
  std::string name;
  Format format = Format::BF16;
  Layout layout = Layout::Row;
  int block = 0; ///< 0 for bf16/fp16/fp32 outputs
  ScalePolicy scale = ScalePolicy::None;
  ScaleLayout scaleLayout = ScaleLayout::RowMajor;
  /// Path::via_bf16: decode to bf16 first (the spec's fuse: false).
  bool viaBf16 = false;
  /// Lowered to qct.convert (the direct MX -> FP8 bit conversion).
  bool directConvert = false;
};

struct KernelPlan {
  std::string name;
  std::string specHash;
  Format source = Format::BF16;
  ScaleLayout sourceScaleLayout = ScaleLayout::RowMajor;
  std::optional<RaggedSpec> ragged;
  std::optional<int64_t> staticK;
  KernelFamily family = KernelFamily::Row;
  std::vector<Knob> knobs;
  std::vector<KnobRule> rules;
  std::vector<OutputPlan> outputs; ///< by output index

  /// Whether the kernel lists the schedule knob `knobName`.
  bool hasKnob(llvm::StringRef knobName) const {
    return llvm::any_of(knobs,
                        [&](const Knob &k) { return k.name == knobName; });
  }
};

/// Reads a lowered qct.kernel; fails if the kernel was not lowered (no
/// family) or holds a chain the device library has no form for.
llvm::Expected<KernelPlan> planKernel(mlir::qct::KernelOp kernel);

} // namespace qct

#endif // QCT_TARGET_KERNELPLAN_H
