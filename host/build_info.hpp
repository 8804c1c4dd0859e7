/// @file build_info.hpp
/// @brief What this build of vigor was compiled with, where validation must know it (a job that
/// asks for HDF5 output in a build without HDF5 is bad input). Includes nothing of host/.
#pragma once

namespace vigor::host {

/// Whether this build writes HDF5 (libhdf5 found at configure time); defined with the writer
/// (host/output/hdf5_results.cpp).
bool hdf5_available();

}  // namespace vigor::host
