package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 11, defect 8: a host is a DNS name, an IPv4 literal or a real IPv6 literal. */
class TargetHostTest {
  @Test
  void targetOf_rejectsAHostWithAPortAndOtherNonHosts() {
    for (String bad : List.of("10.0.0.1:8080", "10.0.0.256", "1.2.3", ":::", "1::2::3", "[10.0.0.1]", "-a.example",
        "a..b", "a_b%c", "fe80::1::", "12345::")) {
      assertThatThrownBy(() -> Target.of(bad, 80)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("host: \"" + bad + "\" (expected: a host name or IP address)");
    }
    for (String good : List.of("localhost", "orders.internal", "a-b.c_d.example.", "10.0.0.1", "255.255.255.255",
        "::1", "::", "2001:db8::8:800:200c:417a", "::ffff:10.0.0.1", "fe80::1%eth0", "1:2:3:4:5:6:7:8")) {
      assertThatCode(() -> Target.of(good, 80)).as(good).doesNotThrowAnyException();
    }
    assertThat(Target.of("[2001:db8::1]", 80).host()).isEqualTo("2001:db8::1");
  }

  @Test
  void targetOf_keepsTheIdAndAuthorityOfEachKindOfHost() {
    assertThat(Target.of("orders.internal", 80).id()).isEqualTo("orders.internal:80");
    assertThat(Target.of("fe80::1%eth0", 80).authority()).isEqualTo("[fe80::1%eth0]:80");
    assertThat(Target.of("::ffff:10.0.0.1", 80).id()).isEqualTo("[::ffff:10.0.0.1]:80");
  }
}
