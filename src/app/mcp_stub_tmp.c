#include "app/handover.h"
int mcp_main(int argc, char **argv) { return 2; }
