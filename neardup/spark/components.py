"""The global steps on DataFrames: dense numbering in a sort order, and connected components."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ..clusters import components
from ..errors import NeardupError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Connected components: a reliable checkpoint of the edge table every this many rounds.
CHECKPOINT_EVERY = 3
MAX_CC_ROUNDS = 60
# ... and finish on the driver once this few edges are left (int64 pairs: 16 MB per million).
CC_LOCAL_EDGES = 2_000_000


def dense_index(df: DataFrame, order: Sequence[Any], name: str, *, start: int = 0) -> DataFrame:
    """`df` with `name` = start, start+1, ... in `order`, without collecting to one partition.

    A range-partitioned sort numbers rows inside each partition; the driver turns per-partition counts
    into offsets. The sorted frame is persisted so both passes see the same partitions.
    """
    from pyspark.sql import functions as F

    s = (
        df.orderBy(*order)
        .withColumn("_p", F.spark_partition_id())
        .withColumn("_m", F.monotonically_increasing_id())
    )
    s = s.persist()
    counts = sorted(
        (r["_p"], r["n"], r["m0"])
        for r in s.groupBy("_p").agg(F.count("*").alias("n"), F.min("_m").alias("m0")).collect()
    )
    rows, offset = [], start
    for p, n, m0 in counts:
        rows.append((p, offset - m0))
        offset += n
    spark = df.sparkSession
    shift = spark.createDataFrame(rows or [(0, 0)], "_p int, _shift bigint")
    return (
        s.join(F.broadcast(shift), "_p")
        .withColumn(name, F.col("_m") + F.col("_shift"))
        .drop("_p", "_m", "_shift")
    )


def to_arrow(df: DataFrame) -> pa.Table:
    """A small frame on the driver, as Arrow (Spark 4; older versions through pandas)."""
    return df.toArrow() if hasattr(df, "toArrow") else pa.Table.from_pandas(df.toPandas())


def frame_from_arrow(spark: SparkSession, table: pa.Table) -> DataFrame:
    try:
        return spark.createDataFrame(table)  # Spark 4: Arrow in, no pandas
    except TypeError:
        return spark.createDataFrame(table.to_pandas())


def _large_star(edges: DataFrame) -> DataFrame:
    """Every node links its larger neighbours to the smallest of its neighbourhood (itself included)."""
    from pyspark.sql import functions as F

    both = edges.select("u", "v").union(edges.select(F.col("v").alias("u"), F.col("u").alias("v")))
    low = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    return (
        both.join(low, "u")
        .filter(F.col("v") > F.col("u"))
        .select(F.col("v").alias("u"), F.col("m").alias("v"))
        .distinct()
    )


def _small_star(edges: DataFrame) -> DataFrame:
    """Every node links itself and its smaller neighbours to the smallest of those."""
    from pyspark.sql import functions as F

    down = edges.select(F.greatest("u", "v").alias("u"), F.least("u", "v").alias("v"))
    low = down.groupBy("u").agg(F.min("v").alias("m"))
    spokes = (
        down.join(low, "u")
        .filter(F.col("v") != F.col("m"))
        .select(F.col("v").alias("u"), F.col("m").alias("v"))
    )
    return spokes.union(low.select("u", F.col("m").alias("v"))).distinct()


def connected_components(
    edges: DataFrame,
    *,
    checkpoint_every: int = CHECKPOINT_EVERY,
    max_rounds: int = MAX_CC_ROUNDS,
    local_edges: int = CC_LOCAL_EDGES,
) -> tuple[DataFrame, int]:
    """(node, label) for every node of the undirected edges (a, b): label = smallest node id of its component.

    Alternating large-star / small-star (Kiveris et al., "Connected Components in MapReduce and Beyond",
    2014): each round rewires edges towards smaller ids without changing the components, and the graph
    ends as one star per component around its smallest node, in O(log^2 n) rounds. Each round's edge
    table is materialized (`localCheckpoint`, which cuts the plan), and every `checkpoint_every` rounds
    written to the context's checkpoint directory instead (it survives a lost executor). Once at most `local_edges` edges are left, the driver finishes with
    `clusters.components` (scipy), the local engine's own function. Returns (labels, rounds).
    """
    from pyspark.sql import functions as F

    spark = edges.sparkSession
    reliable = spark.sparkContext.getCheckpointDir() is not None
    cur = (
        edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v"))
        .filter(F.col("u") != F.col("v"))
        .distinct()
        .persist()
    )
    n_cur = cur.count()
    rounds = 0
    while n_cur > local_edges:
        rounds += 1
        if rounds > max_rounds:
            raise NeardupError(f"connected components did not converge in {max_rounds} rounds")
        new = _small_star(_large_star(cur))
        # Each round reads its input four times: without cutting the plan every round it grows 4x a round.
        new = new.checkpoint() if reliable and rounds % checkpoint_every == 0 else new.localCheckpoint()
        n_new = new.count()
        same = n_new == n_cur and new.subtract(cur).limit(1).count() == 0
        cur.unpersist()
        cur, n_cur = new, n_new
        if same:
            break
    if n_cur <= local_edges:
        pairs = to_arrow(cur)
        u = pairs.column("u").to_numpy().astype(np.int64)
        v = pairs.column("v").to_numpy().astype(np.int64)
        nodes, inverse = np.unique(np.concatenate([u, v]), return_inverse=True)
        comp = components(len(nodes), inverse[: len(u)], inverse[len(u) :])
        smallest = np.full(comp.max() + 1 if len(comp) else 0, np.iinfo(np.int64).max)
        np.minimum.at(smallest, comp, nodes)
        rows = pa.table({"node": nodes, "label": smallest[comp]})
        labels = frame_from_arrow(spark, rows)
    else:
        # A star per component: every edge is (member, smallest); the centre labels itself.
        labels = (
            cur.select(F.col("u").alias("node"), F.col("v").alias("label"))
            .union(cur.select(F.col("v").alias("node"), F.col("v").alias("label")))
            .distinct()
        )
    cur.unpersist()
    return labels, rounds
