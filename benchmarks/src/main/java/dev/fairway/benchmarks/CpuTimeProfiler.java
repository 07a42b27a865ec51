package dev.fairway.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time per operation: the CPU time all Java threads of the benchmark JVM used during an
 * iteration (benchmark threads, and for the interceptor benchmark the server's and OkHttp's
 * threads; not the JVM's native GC and JIT threads) divided by the operations of all benchmark
 * threads. Unlike the wall-clock score it does not grow while another process holds the CPU, which
 * on a shared 2-core machine is what makes runs taken at different moments comparable. For one
 * benchmark thread it reads like the score; for 2 threads (both threads' CPU over both threads'
 * operations) it equals JMH's time per operation per thread when both threads run all the time.
 *
 * <p>Use with {@code -prof dev.fairway.benchmarks.CpuTimeProfiler}; reported as {@code cpu.time.norm}.
 */
public final class CpuTimeProfiler implements InternalProfiler {
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private Map<Long, Long> before = Map.of();

  @Override
  public String getDescription() {
    return "CPU time of the JVM's Java threads per operation";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    before = snapshot();
  }

  @Override
  public Collection<? extends Result> afterIteration(
      BenchmarkParams benchmarkParams, IterationParams iterationParams, IterationResult result) {
    Map<Long, Long> after = snapshot();
    long cpu = 0;
    for (Map.Entry<Long, Long> e : after.entrySet()) {
      cpu += e.getValue() - before.getOrDefault(e.getKey(), 0L);
    }
    long ops = result.getMetadata().getMeasuredOps();
    if (ops <= 0) {
      return List.of();
    }
    double nanosPerOp = (double) cpu / ops;
    double scale = benchmarkParams.getTimeUnit().toNanos(1);
    return List.of(new ScalarResult("cpu.time.norm", nanosPerOp / scale,
        unit(benchmarkParams) + "/op", AggregationPolicy.AVG));
  }

  private static String unit(BenchmarkParams params) {
    switch (params.getTimeUnit()) {
      case NANOSECONDS: return "ns";
      case MICROSECONDS: return "us";
      case MILLISECONDS: return "ms";
      default: return params.getTimeUnit().toString();
    }
  }

  private Map<Long, Long> snapshot() {
    long[] ids = threads.getAllThreadIds();
    Map<Long, Long> cpu = new HashMap<>(ids.length * 2);
    for (long id : ids) {
      long t = threads.getThreadCpuTime(id);
      if (t >= 0) {
        cpu.put(id, t);
      }
    }
    return cpu;
  }
}
