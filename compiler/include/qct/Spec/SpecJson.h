//===- SpecJson.h - The canonical JSON form of a normalized spec ----------===//
//
// A normalized KernelSpec has one JSON form: every key present (a field that
// does not apply is `null`), enums spelled as in the spec language. Its
// canonical text (sorted keys, no whitespace) is what the spec hash covers,
// and the emitter puts toJson() into the kernel metadata. The form is itself
// a valid spec: parsing it gives back the same KernelSpec and hash.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_SPEC_SPECJSON_H
#define QCT_SPEC_SPECJSON_H

#include "qct/Spec/KernelSpec.h"

#include <nlohmann/json.hpp>

#include <string>

namespace qct {

/// The normalized spec as JSON. `hash` and `path` are not part of it: the
/// hash is computed over this, and where the file lives changes no output.
nlohmann::json toJson(const KernelSpec &spec);

/// toJson(spec) with sorted keys and no whitespace, UTF-8 as is.
std::string canonicalSpecJson(const KernelSpec &spec);

/// Lower-case hex SHA-256 of canonicalSpecJson(spec).
std::string computeSpecHash(const KernelSpec &spec);

} // namespace qct

#endif // QCT_SPEC_SPECJSON_H
