#include "host/cli/cli.hpp"

int main(int argc, char** argv) { return vigor::host::cli_main(argc, argv); }
