/// @file write_header.cpp
/// @brief The model header of a formula model, for the tests: reads the "model" block of a job
/// file and writes what host::formula::model_header generates for it.
///
///     vigor-formula-header JOB.json OUT.hpp STRUCT_NAME
#include <fstream>
#include <iostream>
#include <sstream>

#include "host/errors.hpp"
#include "host/job/formula/codegen.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: vigor-formula-header JOB.json OUT.hpp STRUCT_NAME\n";
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    const auto job = vigor::host::Json::parse(in);
    const auto spec = vigor::host::formula::read_model_spec(job.at("model"));
    std::ofstream(argv[2]) << vigor::host::formula::model_header(spec, argv[3]);
  } catch (const std::exception& e) {
    std::cerr << argv[1] << ": " << e.what() << "\n";
    return 2;
  }
  return 0;
}
