"""The families of input perforation: the accurate apps, stencil, rows:k / cols:k with nn and
li at launch shapes whose tile edges fall differently, the load paths, half and bfloat16
storage and host perforation, each held to the models (context.expected) and, where semantics
says two configurations give the same outputs, to each other bit for bit."""
from .context import check_model, check_same, ident

IMAGE_APPS = ("gaussian3", "gaussian5", "sobel3", "sobel5", "median", "inversion", "bilateral")

# Launch shapes (wg, vec, py) on the 61 x 47 input: blocks 8x4, 32x6, 16x8 and 8x10, so that
# the tile's first row falls at every residue mod 2 and 3 (4 and 10 are not multiples of 3;
# 6 is, and its pattern folds at compile time), the last block is partial along both axes, and
# vec 2 / 4 and py 3 / 5 put several outputs in a work-item.
SHAPES = {"A": ((8, 4), 1, 1), "B": ((16, 2), 2, 3), "C": ((4, 8), 4, 1), "D": ((8, 2), 1, 5)}
# Which apps run the rows/cols matrix at which shape. The fast tier holds every app to it
# once: median (a selection: exact under nn) and gaussian3 at A, gaussian5 (r = 2) at B, sobel3
# and inversion (r = 0: no halo) at C, bilateral and sobel5 at D. --full runs every app at two
# shapes (these and the next) with k = 4 as well.
ROWS_COLS_APPS = {"A": ("median", "gaussian3"), "B": ("gaussian5",), "C": ("sobel3", "inversion"),
                  "D": ("bilateral", "sobel5")}
ROWS_COLS_FULL = {"A": ("median", "gaussian3", "bilateral", "sobel5"),
                  "B": ("gaussian5", "median", "gaussian3"),
                  "C": ("sobel3", "inversion", "gaussian5"),
                  "D": ("bilateral", "sobel5", "sobel3", "inversion")}


def shape_args(key):
    wg, vec, py = SHAPES[key]
    return ["--wg", f"{wg[0]}x{wg[1]}", "--vec", str(vec), "--py", str(py)]


def accurate_apps(ctx, name):
    """Every image app, accurate, on the local tile and the global load path (equal bit for
    bit, semantics §5), and through an image for two apps."""
    fam = "accurate"
    img = ctx.inputs[name]
    rows = ctx.run(["--apps", ",".join(IMAGE_APPS), "--schemes", "accurate",
                    "--load", "local,global", "--wg", "16x8", "--input", ctx.path(name)])
    for row in ctx.ok_rows(fam, rows):
        check_model(ctx, fam, row, img)
        if row["load"] == "global":
            check_same(ctx, "load", row, ctx.counterpart(row, load="local"), "load:local")
    return rows


def stencil(ctx, name):
    """Stencil on apps with a halo of 1 and 2 at two shapes; inversion (r = 0) must be a
    not_applicable row (semantics §4)."""
    fam = "stencil"
    img = ctx.inputs[name]
    apps = IMAGE_APPS if ctx.full else ("gaussian5", "median", "sobel3", "inversion")
    shapes = SHAPES if ctx.full else ("A", "B")
    for s in shapes:
        rows = ctx.run(["--apps", ",".join(apps), "--schemes", "stencil", "--input",
                        ctx.path(name)] + shape_args(s))
        for row in rows:
            if row["app"] == "inversion":
                ctx.tally.record(fam, row["key"], row["status"] == "not_applicable",
                                 f"status {row['status']}, semantics §4: not_applicable")
            elif ctx.ok_rows(fam, [row]):
                check_model(ctx, fam, row, img)


def rows_cols(ctx, name):
    """rows:k and cols:k, k = 2, 3 (and 4 with --full), nn and li, at the four shapes."""
    fam = "rows/cols"
    img = ctx.inputs[name]
    ks = (2, 3, 4) if ctx.full else (2, 3)
    schemes = ",".join(f"{d}:{k}" for d in ("rows", "cols") for k in ks)
    for s, apps in (ROWS_COLS_FULL if ctx.full else ROWS_COLS_APPS).items():
        rows = ctx.run(["--apps", ",".join(apps),
                        "--schemes", schemes, "--recon", "nn,li", "--input", ctx.path(name)] +
                       shape_args(s))
        for row in ctx.ok_rows(fam, rows):
            check_model(ctx, fam, row, img)


def load_paths(ctx, name):
    """The global load path and the image one under input schemes: outputs bit for bit those
    of the tile (semantics §5), and the models'."""
    fam = "load"
    img = ctx.inputs[name]
    runs = [("median", "A", "global", "rows:2,cols:3", "nn,li"),
            ("gaussian5", "B", "global", "rows:3,cols:2", "nn,li"),
            ("median", "A", "image", "rows:3,cols:2", "li"),
            ("gaussian5", "B", "image", "rows:2,cols:3", "li")]
    for app, s, load, schemes, recon in runs:
        rows = ctx.run(["--apps", app, "--schemes", schemes, "--recon", recon, "--load", load,
                        "--input", ctx.path(name)] + shape_args(s))
        for row in ctx.ok_rows(fam, rows):
            check_model(ctx, fam, row, img)
            check_same(ctx, fam, row, ctx.counterpart(row, load="local"), "load:local")


def storage(ctx, name):
    """f16in, f16 and bf16 storage (semantics §7): the input rounded to half (numpy's float16,
    round to nearest even) or to bfloat16 (integer rounding in models.to_bf16), f16 and bf16
    outputs rounded likewise; accurate and under rows/cols with nn and li."""
    fam = "storage"
    img = ctx.inputs[name]
    runs = [("median", "A", "accurate,rows:2,cols:3", "li"),
            ("gaussian5", "B", "accurate,rows:3", "li"),
            ("inversion", "C", "accurate,cols:2", "nn"),
            ("sobel3", "A", "accurate", "nn")]
    for app, s, schemes, recon in runs if ctx.full else runs[:3]:
        rows = ctx.run(["--apps", app, "--schemes", schemes, "--recon", recon,
                        "--precision", "f16in,f16,bf16", "--input", ctx.path(name)] +
                       shape_args(s))
        for row in ctx.ok_rows(fam, rows):
            check_model(ctx, fam, row, img)


def host_perforation(ctx, name):
    """--perforate host: the models' outputs and, bit for bit, those of device perforation of
    the same scheme (semantics §8); stencil and hotspot are not_applicable."""
    fam = "host"
    img = ctx.inputs[name]
    rows = ctx.run(["--apps", "median,gaussian3", "--schemes", "rows:2,cols:3",
                    "--recon", "nn,li", "--perforate", "host", "--input", ctx.path(name)] +
                   shape_args("A"))
    rows += ctx.run(["--apps", "gaussian5", "--schemes", "rows:3,cols:2", "--recon", "li",
                     "--perforate", "host", "--input", ctx.path(name)] + shape_args("B"))
    rows += ctx.run(["--apps", "median", "--schemes", "rows:3", "--recon", "nn,li",
                     "--precision", "f16", "--perforate", "host,device", "--input",
                     ctx.path(name)] + shape_args("A"))
    for row in ctx.ok_rows(fam, rows):
        check_model(ctx, fam, row, img)
        if row["perforate"] == "host":
            check_same(ctx, fam, row, ctx.counterpart(row, perforate="device"),
                       "perforate:device")
    rows = ctx.run(["--apps", "median", "--schemes", "stencil", "--perforate", "host",
                    "--input", ctx.path(name)] + shape_args("A"))
    for row in rows:
        ctx.tally.record(fam, row["key"], row["status"] == "not_applicable",
                         f"status {row['status']}, semantics §8: not_applicable")


def statuses(ctx, name):
    """Configurations the semantics refuse, each a row with its status (nothing run as
    something else): a tile shorter than k (§4), bf16 through an image (§7), hotspot under
    f16in (§7), host perforation (§8) or an image (§5), and the presets rows1 / rows2 as
    rows:2 / rows:3 (§4), bit for bit."""
    fam = "statuses"
    path = ctx.path(name)
    want = [(["--apps", "inversion", "--schemes", "rows:3", "--wg", "8x1", "--input", path],
             "invalid_config"),
            (["--apps", "median", "--schemes", "accurate", "--precision", "bf16", "--load",
              "image", "--wg", "8x4", "--input", path], "not_applicable"),
            (["--apps", "hotspot", "--schemes", "accurate", "--precision", "f16in", "--wg",
              "8x4", "--size", "40x24"], "not_applicable"),
            (["--apps", "hotspot", "--schemes", "rows:2", "--perforate", "host", "--wg", "8x4",
              "--size", "40x24"], "not_applicable"),
            (["--apps", "hotspot", "--schemes", "accurate", "--load", "image", "--wg", "8x4",
              "--size", "40x24"], "not_applicable")]
    for args, status in want:
        for row in ctx.run(args):
            ctx.tally.record(fam, row["key"], row["status"] == status,
                             f"status {row['status']} ({row.get('reason', '')}), {status} wanted")
    earlier = dict(ctx.index)  # the rows:2 / rows:3 rows of rows_cols(), before these
    rows = ctx.run(["--apps", "median", "--schemes", "rows1,rows2", "--recon", "nn,li",
                    "--input", path] + shape_args("A"))
    ctx.tally.record(fam, "rows1,rows2 x nn,li: four rows", len(rows) == 4, f"{len(rows)} rows")
    for row in ctx.ok_rows(fam, rows):
        ctx.tally.record(fam, row["key"], row["scheme"] in ("rows:2", "rows:3"),
                         f"scheme {row['scheme']}, canonical rows:2 / rows:3 wanted")
        check_same(ctx, fam, row, earlier.get(ident(row)), "--schemes rows:k")
