#include "app/handover.h"
int explain_main(int argc, char **argv)
{
	return 2;
}
int mcp_main(int argc, char **argv)
{
	return 2;
}
