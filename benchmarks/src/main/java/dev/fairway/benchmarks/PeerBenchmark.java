package dev.fairway.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Fairway and its peers in one benchmark, one pick per operation, same targets, same weights, same
 * Zipf keys. Each {@code balancer} value is one library's strategy reached through its public API
 * (see {@link Peers}); the {@code fairway-*} values are Fairway's equivalent strategies, measured as
 * {@code pick(key)} + {@code release()} so that Fairway pays for the in-flight slot the peers do not
 * take. The peer/Fairway pairs compared in BENCHMARKS.md:
 *
 * <pre>
 * ribbon-round-robin, spring-round-robin, armeria-round-robin  vs  fairway-round-robin
 * dubbo-round-robin (weighted), armeria-weighted-round-robin  vs  fairway-weighted-round-robin
 * spring-random                                               vs  fairway-random
 * dubbo-least-active                                          vs  fairway-least-connections
 * dubbo-consistent-hash                                       vs  fairway-consistent-hash
 * ribbon-weighted-response-time                               vs  fairway-least-response-time
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PeerBenchmark {

  @Param({
    "fairway-round-robin",
    "fairway-weighted-round-robin",
    "fairway-random",
    "fairway-least-connections",
    "fairway-consistent-hash",
    "fairway-least-response-time",
    "ribbon-round-robin",
    "ribbon-weighted-response-time",
    "spring-round-robin",
    "spring-random",
    "dubbo-round-robin",
    "dubbo-least-active",
    "dubbo-consistent-hash",
    "armeria-round-robin",
    "armeria-weighted-round-robin"
  })
  public String balancer;

  /** 4 and 64 by default to keep the full run short; add 1,024 with {@code -p targets=4,64,1024}. */
  @Param({"4", "64"})
  public int targets;

  Peers.Chooser chooser;

  @Setup
  public void setUp() throws Exception {
    chooser = Peers.create(balancer, targets);
  }

  @TearDown
  public void tearDown() throws Exception {
    chooser.close();
  }

  @Benchmark
  public Object pick(KeyCursor keys) throws Exception {
    return chooser.choose(keys.nextIndex(), keys.keys);
  }
}
