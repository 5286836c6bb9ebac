#include "microscale/Conversion/NVVM/Chip.h"
