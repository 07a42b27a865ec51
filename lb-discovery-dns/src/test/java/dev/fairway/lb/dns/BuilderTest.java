package dev.fairway.lb.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BuilderTest {
  @Test
  void name_mustBeADnsName() {
    assertThatThrownBy(() -> DnsTargetSource.srv(" orders")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("name: \" orders\" (expected: a DNS name");
    assertThatThrownBy(() -> DnsTargetSource.srv("a..b")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("name: \"a..b\" (expected: a DNS name");
    assertThatThrownBy(() -> DnsTargetSource.srv(".")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name: \".\" (expected: a DNS name other than the root)");
    assertThatThrownBy(() -> DnsTargetSource.srv(null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("name: null");
  }

  @Test
  void port_mustBeAPort() {
    assertThatThrownBy(() -> DnsTargetSource.addresses("web.svc.test", 0))
        .hasMessage("port: 0 (expected: 1..65535)");
    assertThatThrownBy(() -> DnsTargetSource.addresses("web.svc.test", 65536))
        .hasMessage("port: 65536 (expected: 1..65535)");
  }

  @Test
  void refreshBounds_stayWithinOneSecondAndFiveMinutes() {
    assertThatThrownBy(() -> DnsTargetSource.srv("x.test").refreshBounds(Duration.ofMillis(500), Duration.ofMinutes(1)))
        .hasMessage("refreshBounds min: PT0.5S (expected: PT1S..PT5M)");
    assertThatThrownBy(() -> DnsTargetSource.srv("x.test").refreshBounds(Duration.ofSeconds(10), Duration.ofSeconds(5)))
        .hasMessage("refreshBounds max: PT5S (expected: PT10S..PT5M)");
    assertThatThrownBy(() -> DnsTargetSource.srv("x.test").refreshBounds(Duration.ofSeconds(1), Duration.ofMinutes(6)))
        .hasMessage("refreshBounds max: PT6M (expected: PT1S..PT5M)");
    DnsTargetSource.Builder b = DnsTargetSource.srv("x.test").refreshBounds(Duration.ofSeconds(2), Duration.ofMinutes(2));
    assertThatThrownBy(() -> b.refreshBounds(Duration.ofSeconds(2), Duration.ofMinutes(2)))
        .isInstanceOf(IllegalStateException.class).hasMessage("refreshBounds was already set to \"PT2S..PT2M\"");
  }

  @Test
  void queryTimeout_resolver_andFamilies_areChecked() {
    assertThatThrownBy(() -> DnsTargetSource.srv("x.test").queryTimeout(Duration.ZERO))
        .hasMessage("queryTimeout: PT0S (expected: PT0.001S..PT60S)");
    assertThatThrownBy(() -> DnsTargetSource.srv("x.test").resolver(InetSocketAddress.createUnresolved("dns", 53)))
        .hasMessageStartingWith("resolver: dns")
        .hasMessageEndingWith("(expected: a resolved address with a port, such as 127.0.0.1:53)");
    assertThatThrownBy(() -> DnsTargetSource.srv("x.test").ipv4Only().ipv6Only())
        .isInstanceOf(IllegalStateException.class).hasMessage("ipv6Only: ipv4Only was already set (expected: one of them)");
    assertThatThrownBy(() -> DnsTargetSource.srv("x.test").service(" "))
        .hasMessage("service: \" \" (expected: a non-blank name)");
  }

  @Test
  void aSourceWithItsOwnThread_namesIt_andCloseEndsIt() throws Exception {
    // A loopback port nobody answers on: the source starts, and close() must not wait for the reply.
    try (java.net.DatagramSocket silent = new java.net.DatagramSocket(0, java.net.InetAddress.getLoopbackAddress())) {
      DnsTargetSource source = DnsTargetSource.srv("_http._tcp.orders.svc.test.")
          .resolver(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), silent.getLocalPort()))
          .build();
      assertThat(source.name()).isEqualTo("_http._tcp.orders.svc.test");
      assertThat(source.service()).isEqualTo("_http._tcp.orders.svc.test");
      assertThat(source.toString()).isEqualTo("DnsTargetSource{_http._tcp.orders.svc.test, targets=0}");
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
      while (!threadAlive("fairway-dns-_http._tcp.orders.svc.test") && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(threadAlive("fairway-dns-_http._tcp.orders.svc.test")).isTrue();
      source.close();
      while (threadAlive("fairway-dns-_http._tcp.orders.svc.test") && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(threadAlive("fairway-dns-_http._tcp.orders.svc.test")).as("thread ended by close").isFalse();
    }
  }

  private static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }
}
