package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;


import dev.fairway.lb.HedgingPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LabOptionsTest {
  @Test
  void noOptions_isTheQuickProfileOfEverything() {
    LabOptions o = LabOptions.parse();
    assertThat(o.scenarios()).containsExactlyElementsOf(Scenario.defaultRun())
        .doesNotContain(Scenario.JITTER, Scenario.ZONES); // both run only when named
    assertThat(o.hedging()).isNull();
    assertThat(o.strategies()).hasSize(10);
    assertThat(o.timeScale()).isEqualTo(LabOptions.QUICK_TIME_SCALE);
    assertThat(o.duration()).isEqualTo(LabOptions.QUICK_DURATION);
    assertThat(o.report).isEqualTo(Path.of("lab-report.html"));
    assertThat(o.maxAttempts()).isEqualTo(3);
    assertThat(o.loadReports()).isFalse();
    assertThat(o.clients(Scenario.STEADY)).isEqualTo(1);
    assertThat(o.clients(Scenario.FLEET)).isEqualTo(50);
    assertThat(o.clients(Scenario.SLOWDOWN)).isEqualTo(10);
    assertThat(o.clients(Scenario.FASTFAIL)).isEqualTo(10);
  }

  @Test
  void defaultRun_isPlannedAtAboutFourMinutes() {
    // 10 strategies x (four scenarios at 0.6 s warm-up + 1.6 s + 0.7 s, recovery with its 0.4 s tail,
    // fleet with 49 more clients, slowdown and fastfail with 9 more, at 0.03 s a client).
    double perRun = 0.6 + 1.6 + 0.7;
    double expected = 10 * (4 * perRun + (perRun + 0.4) + (perRun + 49 * 0.03) + 2 * (perRun + 9 * 0.03));
    assertThat(Lab.plannedSeconds(LabOptions.parse())).isCloseTo(expected, within(1e-6)).isCloseTo(256.1, within(0.1));
  }

  @Test
  void clients_replaceEachScenariosKButNeverExceedN() {
    LabOptions o = LabOptions.parse("--clients", "25", "--load-reports");
    assertThat(o.clients(Scenario.STEADY)).isEqualTo(25);
    assertThat(o.clients(Scenario.FLEET)).isEqualTo(25);
    assertThat(o.clients(Scenario.LIGHT)).isEqualTo(20); // 20 users: a 21st client would send nothing
    assertThat(o.loadReports()).isTrue();
    assertThat(LabOptions.parse("--load-reports=false").loadReports()).isFalse();
    assertThat(LabOptions.parse("--clients", "1", "--scenario", "fleet").clients(Scenario.FLEET)).isEqualTo(1);
  }

  @Test
  void timeScaleAlone_keepsTheThirtySecondWindow() {
    LabOptions o = LabOptions.parse("--time-scale", "1.0");
    assertThat(o.duration()).isEqualTo(Duration.ofSeconds(30));
    assertThat(o.timeScale()).isEqualTo(1.0);
  }

  @Test
  void everyOption_isRead() {
    LabOptions o = LabOptions.parse("--scenario", "failure", "--strategies", "round-robin,key-affinity",
        "--duration", "1500ms", "--time-scale", "0.1", "--workers", "4", "--users", "50", "--csv", "x.csv",
        "--report=r.html", "--max-attempts", "1");
    assertThat(o.scenarios()).containsExactly(Scenario.FAILURE);
    assertThat(o.strategies()).containsExactly("round-robin", "key-affinity");
    assertThat(o.duration()).isEqualTo(Duration.ofMillis(1500));
    assertThat(o.workers()).isEqualTo(4);
    assertThat(o.users(Scenario.FAILURE)).isEqualTo(50);
    assertThat(o.csv).isEqualTo(Path.of("x.csv"));
    assertThat(o.report).isEqualTo(Path.of("r.html"));
    assertThat(o.maxAttempts()).isEqualTo(1);
    assertThat(o.serviceSeconds()).containsExactly(new double[] {0.005, 0.015, 0.03, 0.05}, within(1e-12));
  }

  @Test
  void badValues_nameTheOption() {
    assertThatThrownBy(() -> LabOptions.parse("--strategies", "fastest"))
        .hasMessageStartingWith("--strategies: \"fastest\"");
    assertThatThrownBy(() -> LabOptions.parse("--scenario", "storm")).hasMessageContaining("\"storm\"");
    assertThatThrownBy(() -> LabOptions.parse("--duration", "soon")).hasMessageStartingWith("--duration: \"soon\"");
    assertThatThrownBy(() -> LabOptions.parse("--max-attempts", "0")).hasMessage("--max-attempts: 0 (expected: 1..10)");
    assertThatThrownBy(() -> LabOptions.parse("--workers")).hasMessage("--workers: missing value");
    assertThatThrownBy(() -> LabOptions.parse("--color", "red")).hasMessage("unknown option: --color");
    assertThatThrownBy(() -> LabOptions.parse("--clients", "0")).hasMessage("--clients: 0 (expected: 1..500)");
    assertThatThrownBy(() -> LabOptions.parse("--load-reports=yes"))
        .hasMessage("--load-reports: \"yes\" (expected: true or false)");
  }

  @Test
  void hedge_isAPercentileAFixedDelayOrOff_andJitterRunsWhenNamed() {
    LabOptions o = LabOptions.parse("--scenario", "jitter,slowdown", "--hedge", "p95");
    assertThat(o.scenarios()).containsExactly(Scenario.JITTER, Scenario.SLOWDOWN);
    assertThat(o.hedging()).isEqualTo(HedgingPolicy.percentile(95.0));
    assertThat(o.toString()).endsWith(", hedging p95");
    assertThat(LabOptions.parse("--hedge", "p99.9").hedging()).isEqualTo(HedgingPolicy.percentile(99.9));
    assertThat(LabOptions.parse("--hedge=20ms").hedging()).isEqualTo(HedgingPolicy.fixedDelay(Duration.ofMillis(20)));
    assertThat(LabOptions.parse("--hedge", "off").hedging()).isNull();
    assertThat(LabOptions.parse("--scenario", "all").scenarios()).doesNotContain(Scenario.JITTER);
    assertThatThrownBy(() -> LabOptions.parse("--hedge", "p100"))
        .hasMessage("--hedge: \"p100\" (expected: p95, p99 (50..99.99), a delay like 20ms, or off)");
    assertThatThrownBy(() -> LabOptions.parse("--hedge", "soon"))
        .hasMessage("--hedge: \"soon\" (expected: p95, p99 (50..99.99), a delay like 20ms, or off)");
  }

  @Test
  void jitterLimit_isSteadysAtTheMeanServiceTime() {
    double[] s = {0.05, 0.15, 0.3, 0.5};
    double steady = Limit.averagedRps(Scenario.STEADY, 100, 8, s);
    assertThat(steady).isCloseTo(256.0, within(1e-6));
    assertThat(Limit.averagedRps(Scenario.JITTER, 100, 8, s)).isCloseTo(256.0 / 1.19, within(1e-6));
  }

  @Test
  void durations_acceptCommonUnits() {
    assertThat(LabCommandLine.parseDuration("30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(LabCommandLine.parseDuration("0.5s")).isEqualTo(Duration.ofMillis(500));
    assertThat(LabCommandLine.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(LabCommandLine.parseDuration("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(LabCommandLine.parseDuration("3")).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void reports_runsOnlyWhenNamed_withItsRunsAndCells() {
    assertThat(LabOptions.parse().scenarios()).doesNotContain(Scenario.REPORTS);
    LabOptions o = LabOptions.parse("--scenario", "reports", "--runs", "3", "--cells", "core",
        "--strategies", "least-queueing,round-robin");
    assertThat(o.scenarios()).containsExactly(Scenario.REPORTS);
    assertThat(o.runs).isEqualTo(3);
    assertThat(o.coreCells).isTrue();
    assertThat(ReportsLab.strategies(o)).containsExactly("least-queueing"); // round robin reads no reports
    assertThatThrownBy(() -> LabOptions.parse("--runs", "0")).hasMessage("--runs: 0 (expected: 1..20)");
    String expected = " (expected: full, core, or a comma-separated list of none, honest A, honest B,"
        + " honest tomcat-200, liar rif=1, liar rif=0, frozen)";
    assertThatThrownBy(() -> LabOptions.parse("--cells", "most")).hasMessage("--cells: \"most\"" + expected);
    assertThatThrownBy(() -> LabOptions.parse("--cells", "none,honest C")).hasMessage("--cells: \"none,honest C\"" + expected);
  }

  @Test
  void reportsCells_byName_keepOnlyThoseConditions_atEveryClientCount() {
    LabOptions o = LabOptions.parse("--scenario", "reports", "--cells", "honest tomcat-200, none,none");
    assertThat(o.onlyCells).containsExactly("honest tomcat-200", "none");
    List<String> kept = new ArrayList<>();
    for (int clients : ReportsLab.CLIENTS) {
      for (ReportsLab.Condition c : ReportsLab.conditions(8)) {
        if (ReportsLab.chosen(o, clients, c)) {
          kept.add(clients + " " + c.name());
        }
      }
    }
    assertThat(kept).containsExactly("1 none", "1 honest tomcat-200", "50 none", "50 honest tomcat-200");
    assertThat(ReportsLab.conditions(8)).extracting(ReportsLab.Condition::name)
        .containsExactlyElementsOf(ReportsLab.CONDITION_NAMES);
    LabOptions core = LabOptions.parse("--cells", "core");
    LabOptions full = LabOptions.parse("--cells", "honest A", "--cells", "full");
    assertThat(full.onlyCells).isEmpty();
    int coreCount = 0;
    int fullCount = 0;
    for (int clients : ReportsLab.CLIENTS) {
      for (ReportsLab.Condition c : ReportsLab.conditions(8)) {
        coreCount += ReportsLab.chosen(core, clients, c) ? 1 : 0;
        fullCount += ReportsLab.chosen(full, clients, c) ? 1 : 0;
      }
    }
    assertThat(fullCount).isEqualTo(14);
    assertThat(coreCount).isEqualTo(9); // 1 client: none and the three honest styles; 50: none, B and the three liars
  }
}
