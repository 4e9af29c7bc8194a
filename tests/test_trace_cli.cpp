// Traces and replay from the command line.
#include <gtest/gtest.h>
