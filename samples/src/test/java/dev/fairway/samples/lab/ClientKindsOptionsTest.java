package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.fairway.lb.HedgingPolicy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code --client jdk}, {@code --client hc5} and lists of clients: what parses, what is refused and why. */
class ClientKindsOptionsTest {
  @Test
  void jdkAndHc5_runEveryFairwayStrategyAsOkHttpDoes() {
    for (String id : List.of("jdk", "hc5")) {
      LabOptions o = LabOptions.parse("--client", id);
      assertThat(o.client().id()).isEqualTo(id);
      assertThat(o.clientKinds()).containsExactly(o.client());
      assertThat(o.strategies()).isEqualTo(LabOptions.ALL_STRATEGIES);
      assertThat(o.toString()).endsWith(", client " + id);
    }
  }

  @Test
  void aList_keepsItsOrderAndEachClientGetsItsOwnOptions() {
    LabOptions o = LabOptions.parse("--client", "okhttp,jdk,hc5", "--max-attempts", "2", "--load-reports");
    assertThat(o.clientKinds()).containsExactly(LabClient.Kind.OKHTTP, LabClient.Kind.JDK, LabClient.Kind.HC5);
    assertThat(o.client()).isEqualTo(LabClient.Kind.OKHTTP);
    assertThat(o.toString()).endsWith(", clients okhttp,jdk,hc5");
    LabOptions hc5 = o.forClient(LabClient.Kind.HC5);
    assertThat(hc5.client()).isEqualTo(LabClient.Kind.HC5);
    assertThat(hc5.clientKinds()).isEqualTo(o.clientKinds());
    assertThat(hc5.maxAttempts()).isEqualTo(2);
    assertThat(hc5.loadReports()).isTrue();
    assertThat(hc5.strategies()).isEqualTo(o.strategies());
    assertThat(o.forClient(LabClient.Kind.OKHTTP)).isSameAs(o);
    assertThatThrownBy(() -> o.forClient(LabClient.Kind.SPRING)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("client: spring (expected: one of [OKHTTP, JDK, HC5])");
  }

  @Test
  void plannedTime_countsEveryClient() {
    LabOptions one = LabOptions.parse("--scenario", "steady", "--strategies", "round-robin");
    LabOptions three = LabOptions.parse("--scenario", "steady", "--strategies", "round-robin", "--client", "okhttp,jdk,hc5");
    assertThat(Lab.plannedSeconds(three)).isCloseTo(3 * Lab.plannedSeconds(one), within(1e-9));
  }

  @Test
  void hedge_isTakenByJdkAndHc5_asByOkHttp() {
    LabOptions jdk = LabOptions.parse("--client", "jdk", "--hedge", "p95");
    assertThat(jdk.hedging()).isEqualTo(HedgingPolicy.percentile(95.0));
    assertThat(jdk.toString()).endsWith(", hedging p95, client jdk");
    LabOptions both = LabOptions.parse("--client", "okhttp,hc5", "--hedge", "20ms");
    assertThat(both.forClient(LabClient.Kind.HC5).hedging()).isEqualTo(HedgingPolicy.fixedDelay(Duration.ofMillis(20)));
    assertThat(both.forClient(LabClient.Kind.OKHTTP).hedging()).isEqualTo(HedgingPolicy.fixedDelay(Duration.ofMillis(20)));
    assertThat(LabOptions.parse("--client", "jdk", "--hedge", "off").hedging()).isNull();
    // Spring Cloud LoadBalancer still has no hedging.
    assertThatThrownBy(() -> LabOptions.parse("--client", "spring", "--hedge", "p95"))
        .isInstanceOf(LabOptions.UsageException.class)
        .hasMessage("--hedge: \"p95\" (expected: off with --client spring: Spring Cloud LoadBalancer does not hedge)");
  }

  @Test
  void okHttpOnlyScenarios_areRefusedWithJdkAndHc5() {
    assertThatThrownBy(() -> LabOptions.parse("--client", "jdk", "--scenario", "steady,zones"))
        .hasMessage("--scenario: \"zones\" (expected: with --client okhttp only: its cross-zone penalty is an OkHttp"
            + " interceptor)");
    for (String scenario : List.of("subset", "rolling", "kubernetes")) {
      assertThatThrownBy(() -> LabOptions.parse("--client", "hc5", "--scenario", scenario))
          .as(scenario)
          .hasMessage("--scenario: \"" + scenario + "\" (expected: with --client okhttp only: its clients are OkHttp"
              + " clients of its own)");
    }
  }

  @Test
  void reports_takeOneClient() {
    assertThat(LabOptions.parse("--client", "jdk", "--scenario", "reports").client()).isEqualTo(LabClient.Kind.JDK);
    assertThatThrownBy(() -> LabOptions.parse("--client", "okhttp,jdk", "--scenario", "reports"))
        .hasMessage("--scenario: \"reports\" (expected: with one --client: its table has no client column)");
  }

  @Test
  void badLists_areRefused() {
    assertThatThrownBy(() -> LabOptions.parse("--client", "okhttp,curl"))
        .hasMessage("--client: \"curl\" (expected: okhttp, jdk, hc5 or spring, or a comma-separated list of okhttp, jdk"
            + " and hc5)");
    assertThatThrownBy(() -> LabOptions.parse("--client", "jdk,jdk"))
        .hasMessage("--client: \"jdk,jdk\" (expected: each client at most once)");
    assertThatThrownBy(() -> LabOptions.parse("--client", "okhttp,spring"))
        .hasMessage("--client: \"okhttp,spring\" (expected: spring alone: its strategies are Spring Cloud LoadBalancer's"
            + " and the starter's; a list of okhttp, jdk and hc5)");
    assertThatThrownBy(() -> LabOptions.parse("--client", "jdk", "--strategies", "spring-round-robin"))
        .hasMessage("--strategies: \"spring-round-robin\" (expected: with --client spring only)");
  }
}
