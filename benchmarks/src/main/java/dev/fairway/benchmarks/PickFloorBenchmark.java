package dev.fairway.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The least any tracked pick can cost on this machine: one {@code System.nanoTime()} (the pick's
 * start time) plus one atomic increment and one atomic decrement of a counter alone on its cache
 * line (the in-flight slot taken and given back). {@code PickBenchmark.pick} does that and chooses a
 * target; its score divided by this one is the strategy's overhead factor. {@code floor_2t} is the
 * same on 2 threads sharing the counter, the floor of {@code pick_2t}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PickFloorBenchmark {
  final PaddedInFlight counter = new PaddedInFlight();

  @Benchmark
  public long floor() {
    long start = System.nanoTime();
    counter.increment();
    counter.decrement();
    return start;
  }

  @Benchmark
  @Threads(2)
  public long floor_2t() {
    long start = System.nanoTime();
    counter.increment();
    counter.decrement();
    return start;
  }

  abstract static class PadBefore {
    long p01, p02, p03, p04, p05, p06, p07, p08;
  }

  abstract static class Value extends PadBefore {
    volatile int value;
  }

  /** An int counter padded on both sides, as lb-core pads a target's in-flight count. */
  static final class PaddedInFlight extends Value {
    private static final AtomicIntegerFieldUpdater<Value> VALUE =
        AtomicIntegerFieldUpdater.newUpdater(Value.class, "value");

    long q01, q02, q03, q04, q05, q06, q07, q08;

    void increment() {
      VALUE.incrementAndGet(this);
    }

    void decrement() {
      VALUE.decrementAndGet(this);
    }
  }
}
