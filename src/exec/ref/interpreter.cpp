#include "exec/ref/interpreter.h"
