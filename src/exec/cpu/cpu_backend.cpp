#include "exec/backend.h"
