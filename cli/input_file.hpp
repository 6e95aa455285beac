// Opening the FILE arguments of the commands: a path that cannot be opened, or a directory
// (which an ifstream opens and reads as an empty file), is an error naming the path.
#pragma once

#include <fstream>
#include <string>

namespace tcemu::cli {

// `path` opened for reading; throws InputError naming it when it is a directory or
// cannot be opened.
std::ifstream open_input(const std::string& path);

// Throws InputError when standard input is a directory (`tcemu mma < DIR`).
void check_stdin_is_not_a_directory();

}  // namespace tcemu::cli
