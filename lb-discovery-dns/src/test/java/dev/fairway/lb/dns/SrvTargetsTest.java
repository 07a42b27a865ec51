package dev.fairway.lb.dns;

import static dev.fairway.lb.dns.ScriptedDns.inet;
import static dev.fairway.lb.dns.ScriptedDns.name;
import static dev.fairway.lb.dns.ScriptedDns.srv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.SRVRecord;

class SrvTargetsTest {
  private static final String S = "_http._tcp.orders.svc.test.";

  private static List<String> idsAndWeights(List<Target> targets) {
    return targets.stream().map(t -> t.id() + " w" + t.weight()).toList();
  }

  @Test
  void groups_lowestPriorityFirst_dropsDotAndPortZero() {
    SRVRecord high = srv(S, 60, 20, 1, 8083, "c.svc.test.");
    SRVRecord low = srv(S, 60, 10, 1, 8081, "a.svc.test.");
    SRVRecord dot = srv(S, 60, 5, 0, 0, ".");
    SRVRecord portZero = srv(S, 60, 10, 1, 0, "b.svc.test.");
    assertThat(SrvTargets.groups(List.of(high, dot, low, portZero))).containsExactly(List.of(low), List.of(high));
  }

  @Test
  void weights_areTheRecordsOwn_whenNoneIsZero() {
    List<SRVRecord> group = List.of(srv(S, 60, 10, 3, 8081, "a.svc.test."), srv(S, 60, 10, 1, 8082, "b.svc.test."));
    assertThat(idsAndWeights(SrvTargets.targets(group, Map.of(
        name("a.svc.test."), List.of(inet("10.0.0.1")), name("b.svc.test."), List.of(inet("10.0.0.2"))))))
        .containsExactly("10.0.0.1:8081 w3", "10.0.0.2:8082 w1");
  }

  @Test
  void weights_allZero_areEqual() {
    List<SRVRecord> group = List.of(srv(S, 60, 10, 0, 8081, "a.svc.test."), srv(S, 60, 10, 0, 8082, "b.svc.test."));
    assertThat(SrvTargets.scale(group)).isZero();
    assertThat(idsAndWeights(SrvTargets.targets(group, Map.of(
        name("a.svc.test."), List.of(inet("10.0.0.1")), name("b.svc.test."), List.of(inet("10.0.0.2"))))))
        .containsExactly("10.0.0.1:8081 w1", "10.0.0.2:8082 w1");
  }

  @Test
  void weights_zeroNextToPositive_getAboutOnePercentOfWeightOne() {
    List<SRVRecord> group = List.of(srv(S, 60, 10, 0, 8081, "a.svc.test."), srv(S, 60, 10, 1, 8082, "b.svc.test."),
        srv(S, 60, 10, 3, 8083, "c.svc.test."));
    assertThat(idsAndWeights(SrvTargets.targets(group, Map.of(
        name("a.svc.test."), List.of(inet("10.0.0.1")), name("b.svc.test."), List.of(inet("10.0.0.2")),
        name("c.svc.test."), List.of(inet("10.0.0.3"))))))
        .containsExactly("10.0.0.1:8081 w1", "10.0.0.2:8082 w100", "10.0.0.3:8083 w300");
  }

  @Test
  void weights_zeroNextToTheLargestSrvWeight_stayWithinTheTargetMaximum() {
    List<SRVRecord> group = List.of(srv(S, 60, 10, 0, 8081, "a.svc.test."), srv(S, 60, 10, 65535, 8082, "b.svc.test."));
    assertThat(SrvTargets.scale(group)).isEqualTo(15); // 1,000,000 / 65535
    assertThat(SrvTargets.weight(65535, 15)).isEqualTo(983_025);
    assertThat(SrvTargets.weight(0, 15)).isEqualTo(1);
  }

  @Test
  void weight_isSplitOverAHostsAddresses_andSharesOnOneAddressAddUp() {
    List<SRVRecord> group = List.of(srv(S, 60, 10, 10, 8081, "a.svc.test."), srv(S, 60, 10, 4, 8081, "b.svc.test."));
    Map<org.xbill.DNS.Name, List<InetAddress>> addresses = Map.of(
        name("a.svc.test."), List.of(inet("10.0.0.1"), inet("10.0.0.2")),
        name("b.svc.test."), List.of(inet("10.0.0.2")));
    assertThat(idsAndWeights(SrvTargets.targets(group, addresses)))
        .containsExactly("10.0.0.1:8081 w5", "10.0.0.2:8081 w9");
  }

  @Test
  void targets_carryTheRecordInTheirMetadata_andSkipHostsWithoutAddresses() {
    List<SRVRecord> group = List.of(srv(S, 60, 10, 7, 8081, "a.svc.test."), srv(S, 60, 10, 1, 8082, "gone.svc.test."));
    List<Target> targets = SrvTargets.targets(group, Map.of(name("a.svc.test."), List.of(inet("fd00::1"))));
    assertThat(targets).hasSize(1);
    Target t = targets.get(0);
    assertThat(t.id()).isEqualTo("[fd00::1]:8081");
    assertThat(t.host()).isEqualTo("fd00::1");
    assertThat(t.metadata()).containsExactlyInAnyOrderEntriesOf(
        Map.of("dns.name", "a.svc.test", "dns.priority", "10", "dns.weight", "7"));
  }

  @Test
  void literal_writesIpv6InItsShortestForm() {
    assertThat(SrvTargets.literal(inet("0:0:0:0:0:0:0:1"))).isEqualTo("::1");
    assertThat(SrvTargets.literal(inet("2001:db8:0:1:0:0:0:1"))).isEqualTo("2001:db8:0:1::1");
    assertThat(SrvTargets.literal(inet("2001:db8:0:0:1:0:0:1"))).isEqualTo("2001:db8::1:0:0:1");
    assertThat(SrvTargets.literal(inet("1:0:1:0:1:0:1:0"))).isEqualTo("1:0:1:0:1:0:1:0");
    assertThat(SrvTargets.literal(inet("fd00:0:0:0:0:0:0:0"))).isEqualTo("fd00::");
    assertThat(SrvTargets.literal(inet("10.1.2.3"))).isEqualTo("10.1.2.3");
  }
}
