package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lab --client spring} at a tiny time scale: light, steady, fleet, fastfail and failure, each
 * through Spring Cloud LoadBalancer's round robin and through Fairway's default strategy behind the
 * starter, every client its own Spring context. Checks structure and exact facts (rows, counts,
 * retried failures), no throughput.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringLabSmokeTest {
  private static final List<Scenario> SCENARIOS =
      List.of(Scenario.LIGHT, Scenario.STEADY, Scenario.FLEET, Scenario.FASTFAIL, Scenario.FAILURE);

  /**
   * 1.5 s measured per run: a Spring client's call costs the machine more than an OkHttp one, and on
   * a busy machine 0.7 s left fastfail's window ending inside its 0.05 s grace and failure's last
   * two thirds without a call that round robin sent to the dead backend.
   */
  private static final String WINDOW = "1500ms";

  private LabOptions options;
  private List<RunResult> results;
  private List<String[]> csv;
  private String stdout;
  private Set<Thread> threadsBefore;

  @BeforeAll
  void runTheLab(@TempDir Path dir) throws Exception {
    threadsBefore = Thread.getAllStackTraces().keySet();
    options = LabOptions.parse("--client", "spring", "--scenario", "light,steady,fleet,fastfail,failure",
        "--time-scale", "0.05", "--duration", WINDOW, "--csv", dir.resolve("lab.csv").toString(),
        "--report", dir.resolve("lab-report.html").toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    results = new Lab(options, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8)).runAndReport();
    stdout = out.toString(StandardCharsets.UTF_8);
    System.out.println(stdout);
    csv = new ArrayList<>();
    List<String> lines = Files.readAllLines(dir.resolve("lab.csv"));
    for (String line : lines.subList(1, lines.size())) {
      csv.add(line.split(",", -1));
    }
  }

  @Test
  void strategies_areSpringsRoundRobinBesideFairwaysDefault() {
    assertThat(options.strategies()).containsExactly("spring-round-robin", "least-queueing");
  }

  @Test
  void csv_hasBothBalancersRowsForEveryScenario() {
    Set<String> seen = new HashSet<>();
    for (String[] row : csv) {
      assertThat(seen.add(row[0] + "/" + row[1])).as("duplicate row %s/%s", row[0], row[1]).isTrue();
      assertThat(Long.parseLong(row[20])).as("hedges of %s/%s", row[0], row[1]).isZero();
    }
    Set<String> expected = new HashSet<>();
    for (Scenario s : SCENARIOS) {
      for (String strategy : options.strategies()) {
        expected.add(s.id() + "/" + strategy);
      }
    }
    assertThat(seen).isEqualTo(expected);
  }

  @Test
  void perBackendCounts_addUpToTheCompletedCalls() {
    for (RunResult r : results) {
      long sum = 0;
      for (long n : r.perBackend()) {
        sum += n;
      }
      assertThat(sum).as("%s/%s", r.scenario().id(), r.strategy()).isEqualTo(r.completed()).isPositive();
    }
  }

  @Test
  void clients_areEachScenariosK() {
    for (RunResult r : results) {
      int expected = r.scenario() == Scenario.FLEET ? 50 : r.scenario() == Scenario.FASTFAIL ? 10 : 1;
      assertThat(r.clients()).as("clients of %s/%s", r.scenario().id(), r.strategy()).isEqualTo(expected);
    }
  }

  @Test
  void failureAndFastfail_haveNoCallerVisibleErrorForGetWithSpringsRetry() {
    for (Scenario s : List.of(Scenario.FAILURE, Scenario.FASTFAIL)) {
      for (RunResult r : Lab.rowsOf(results, s)) {
        assertThat(r.errors()).as("errors in %s with %s", s.id(), r.strategy()).isZero();
      }
    }
  }

  @Test
  void springRoundRobin_keepsPickingTheDeadBackendAndSpringRetriesEachRefusal() {
    // No health of its own: after the kill every fourth pick is backend-1, refused, and retried.
    RunResult r = row(Scenario.FAILURE, "spring-round-robin");
    assertThat(r.retries()).isPositive();
    assertThat(r.perBackend()[0]).as("calls served by backend-1 before the kill").isPositive();
  }

  @Test
  void fastfail_countsTheShareThatReachedBackendTwo() {
    for (RunResult r : Lab.rowsOf(results, Scenario.FASTFAIL)) {
      assertThat(r.failingShare()).as("share reaching backend-2 with %s", r.strategy()).isBetween(0.0, 1.0);
      assertThat(r.perBackend()[1]).as("calls served by backend-2 before the fault, %s", r.strategy()).isPositive();
    }
  }

  @Test
  void stdout_namesTheClient() {
    assertThat(stdout).contains(", client spring");
    for (String strategy : options.strategies()) {
      assertThat(stdout).contains("  " + strategy + " ");
    }
  }

  @Test
  void run_leavesNoThreadBehind() throws InterruptedException {
    // Every Spring context, balancer, backend and user is gone once the lab returns. What stays is
    // shared by the whole JVM: Reactor's schedulers, the common pool, CompletableFuture's delayer
    // (the JDK HTTP client's timeouts), OkHttp's and Okio's (the probe client) and the Cleaner. The
    // JDK 17 HTTP client has no close(): its selector thread ends once the client is unreachable,
    // hence the collections while waiting.
    List<String> shared = List.of("boundedElastic-", "parallel-", "ForkJoinPool.commonPool", "CompletableFutureDelayScheduler",
        "OkHttp TaskRunner", "Okio Watchdog", "Cleaner-", "process reaper", "fairway-hedge-");
    List<String> left = LeftThreads.awaitNone(threadsBefore, shared, Duration.ofSeconds(20), Duration.ofMillis(100), true);
    assertThat(left).as("threads started by the lab and still alive").isEmpty();
  }

  private RunResult row(Scenario scenario, String strategy) {
    return Lab.rowsOf(results, scenario).stream().filter(r -> r.strategy().equals(strategy)).findFirst().orElseThrow();
  }
}
