package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lab --client okhttp,jdk,hc5} at a tiny time scale: light, steady, fleet and fastfail with
 * Fairway's default strategy, each scenario through the three clients in one run (the JDK's HttpClient behind {@code FairwayHttpClient}, HttpClient 5 customized by {@code
 * FairwayHttpClient5}, and OkHttp beside them). Checks structure and exact facts: every row, no
 * caller-visible error, nothing left in flight, no thread left; no throughput or latency.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlainClientsLabSmokeTest {
  private static final List<Scenario> SCENARIOS = List.of(Scenario.LIGHT, Scenario.STEADY, Scenario.FLEET, Scenario.FASTFAIL);
  /**
   * The default strategy only: what this test proves is the clients' path through the lab, which is
   * the same for every strategy; {@link LabSmokeTest} runs every strategy through OkHttp.
   */
  private static final List<String> STRATEGIES = List.of("least-queueing");
  private static final List<String> CLIENTS = List.of("okhttp", "jdk", "hc5");
  /**
   * 1.5 s measured per run, as the Spring smoke test's: at load average 60 on two cores, a 1 s window
   * once ended without a single call of a fleet run started in it.
   */
  private static final String WINDOW = "1500ms";

  private List<RunResult> results;
  private List<String[]> csv;
  private String stdout;
  private Set<Thread> threadsBefore;

  @BeforeAll
  void runTheLab(@TempDir Path dir) throws Exception {
    threadsBefore = Thread.getAllStackTraces().keySet();
    LabOptions options = LabOptions.parse("--client", String.join(",", CLIENTS), "--scenario", "light,steady,fleet,fastfail",
        "--strategies", String.join(",", STRATEGIES), "--time-scale", "0.05", "--duration", WINDOW,
        "--csv", dir.resolve("lab.csv").toString(), "--report", dir.resolve("lab-report.html").toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    results = new Lab(options, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8)).runAndReport();
    stdout = out.toString(StandardCharsets.UTF_8);
    System.out.println(stdout);
    List<String> lines = Files.readAllLines(dir.resolve("lab.csv"));
    assertThat(lines.get(0)).endsWith(",p999_ms,hedges,client");
    csv = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      csv.add(line.split(",", -1));
    }
  }

  @Test
  void csv_hasOneRowPerScenarioStrategyAndClient_inRunOrder() {
    List<String> expected = new ArrayList<>();
    for (Scenario s : SCENARIOS) {
      for (String strategy : STRATEGIES) {
        for (String client : CLIENTS) {
          expected.add(s.id() + "/" + strategy + "/" + client);
        }
      }
    }
    List<String> seen = new ArrayList<>();
    for (String[] row : csv) {
      assertThat(row).hasSize(22);
      seen.add(row[0] + "/" + row[1] + "/" + row[21]);
    }
    assertThat(seen).containsExactlyElementsOf(expected);
    List<String> ran = new ArrayList<>();
    for (RunResult r : results) {
      ran.add(r.scenario().id() + "/" + r.strategy() + "/" + r.client().id());
    }
    assertThat(ran).isEqualTo(expected);
  }

  @Test
  void everyRun_completedCallsOnEveryBackendWithoutAnError() {
    for (RunResult r : results) {
      String run = r.scenario().id() + "/" + r.strategy() + "/" + r.client().id();
      long sum = 0;
      for (long n : r.perBackend()) {
        sum += n;
      }
      assertThat(sum).as("per-backend sum of %s", run).isEqualTo(r.completed()).isPositive();
      assertThat(r.errors()).as("caller-visible errors of %s", run).isZero();
      assertThat(r.hedges()).as("hedges of %s", run).isZero();
    }
  }

  @Test
  void everyRun_leftNothingInFlight() {
    for (RunResult r : results) {
      assertThat(r.leftInFlight()).as("in flight after %s/%s/%s", r.scenario().id(), r.strategy(), r.client().id())
          .isZero();
    }
  }

  @Test
  void clients_areEachScenariosK() {
    for (RunResult r : results) {
      int expected = r.scenario() == Scenario.FLEET ? 50 : r.scenario() == Scenario.FASTFAIL ? 10 : 1;
      assertThat(r.clients()).as("clients of %s/%s/%s", r.scenario().id(), r.strategy(), r.client().id())
          .isEqualTo(expected);
    }
  }

  @Test
  void fastfail_everyClientRetriedTheFastFailures() {
    // Backend-2 answers 503 from a third of the window on; each client's calls that met it before
    // its balancers ejected it went again to another backend, or they would be errors.
    Map<LabClient.Kind, Long> retries = new HashMap<>();
    for (RunResult r : Lab.rowsOf(results, Scenario.FASTFAIL)) {
      retries.merge(r.client(), r.retries(), Long::sum);
      assertThat(r.perBackend()[1]).as("served by backend-2 before the fault, %s/%s", r.strategy(), r.client().id())
          .isPositive();
    }
    assertThat(retries).hasSize(3).allSatisfy((client, n) -> assertThat(n).as("retries of %s", client).isPositive());
  }

  @Test
  void stdout_namesTheClientOfEveryRow() {
    assertThat(stdout).contains(", clients okhttp,jdk,hc5");
    for (String strategy : STRATEGIES) {
      for (String client : CLIENTS) {
        assertThat(stdout).containsPattern("\n  " + strategy + " +" + client + " ");
      }
    }
    Set<String> titles = new HashSet<>();
    for (Scenario s : SCENARIOS) {
      titles.add(s.id() + ": " + s.shape());
    }
    assertThat(titles).allSatisfy(title -> assertThat(stdout).contains(title));
  }

  @Test
  void run_leavesNoThreadBehind() throws InterruptedException {
    // Every client, balancer, backend and user is gone once the lab returns. What stays is shared by
    // the whole JVM: the common pool, CompletableFuture's delayer (the JDK client's timeouts),
    // OkHttp's and Okio's (the probe client) and the Cleaner. The JDK 17 HTTP client has no close():
    // its selector thread ends once the client is unreachable, hence the collections while waiting.
    List<String> shared = List.of("ForkJoinPool.commonPool", "CompletableFutureDelayScheduler", "OkHttp TaskRunner",
        "Okio Watchdog", "Cleaner-", "process reaper");
    List<String> left = LeftThreads.awaitNone(threadsBefore, shared, Duration.ofSeconds(20), Duration.ofMillis(100), true);
    assertThat(left).as("threads started by the lab and still alive").isEmpty();
  }
}
