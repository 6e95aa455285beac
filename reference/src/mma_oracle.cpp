#include <tcemu/reference/mma_oracle.hpp>
