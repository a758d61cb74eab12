//===- qct/runtime/Env.h - Every environment variable, declared once -*- C++
//-*-===//
//
// The runtime reads the environment only through this table, so `qct env`
// can list every variable with its type, default and meaning, and the cache
// key can include every variable flagged as changing compiled output.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_ENV_H
#define QCT_RUNTIME_ENV_H

#include "qct/qct.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace qct::rt::env {

/// The table (static storage; qct_env_at hands out pointers into it).
const qct_env_var *table(std::size_t &count);

/// The declared variable `name`; aborts the call with QCT_ERR_INTERNAL if it
/// is not declared (reading an undeclared variable is a bug).
const qct_env_var &declared(const char *name);

/// The environment's value if set and non-empty, else the declared default.
std::string get(const char *name);
/// 1/true/yes/on is true, 0/false/no/off or unset is false (any case);
/// anything else fails with QCT_ERR_INVALID_ARGUMENT naming the variable.
/// Every bool variable is read through this one parse.
bool getBool(const char *name);
std::int64_t getInt(const char *name);
/// A byte count with an optional K, M or G suffix (powers of 1024); anything
/// else fails with QCT_ERR_INVALID_ARGUMENT naming the variable.
std::uint64_t getBytes(const char *name);

/// "NAME=value\n" for every variable with affects_output, for the cache key.
std::string outputAffectingValues();

/// The default cache folder: $XDG_CACHE_HOME/qct, else $HOME/.cache/qct.
std::string defaultCacheDir();

} // namespace qct::rt::env

#endif // QCT_RUNTIME_ENV_H
