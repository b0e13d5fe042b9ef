// Work-groups "all" (default): the launch covers the grid's groups, and every group id the
// contract reads is OpenCL's own.
