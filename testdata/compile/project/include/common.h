#pragma once
#ifndef BLOCK
#error "BLOCK must be defined by the project"
#endif
