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
bool getBool(const char *name);
std::int64_t getInt(const char *name);

/// "NAME=value\n" for every variable with affects_output, for the cache key.
std::string outputAffectingValues();

/// The default cache folder: $XDG_CACHE_HOME/qct, else $HOME/.cache/qct.
std::string defaultCacheDir();

} // namespace qct::rt::env

#endif // QCT_RUNTIME_ENV_H
