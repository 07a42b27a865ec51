package dev.fairway.lb.jdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.Target;
import java.net.URI;
import java.net.URISyntaxException;
import org.junit.jupiter.api.Test;

class TargetUrisTest {
  private final TargetUris uris = new TargetUris();

  @Test
  void routed_replacesHostAndPort_keepsSchemeUserInfoPathAndQuery_dropsTheFragment() throws Exception {
    URI logical = URI.create("https://user:p%40ss@orders/a%20b/c?q=1&r=%2F#frag");

    assertThat(uris.routed(logical, Target.of("10.0.0.1", 8443)))
        .isEqualTo(URI.create("https://user:p%40ss@10.0.0.1:8443/a%20b/c?q=1&r=%2F"));
    assertThat(uris.routed(URI.create("http://orders"), Target.of("10.0.0.1", 80)))
        .isEqualTo(URI.create("http://10.0.0.1:80/"));
  }

  @Test
  void routed_putsAnIpv6LiteralInBrackets() throws Exception {
    assertThat(uris.routed(URI.create("http://orders/x"), Target.of("::1", 8080)))
        .isEqualTo(URI.create("http://[::1]:8080/x"));
  }

  @Test
  void routed_sameLogicalUriAgain_isTheSameRoutedUri_untilTheTargetMoves() throws Exception {
    URI logical = URI.create("http://orders/x");
    URI first = uris.routed(logical, Target.of("10.0.0.1", 80).withId("a"));

    assertThat(uris.routed(URI.create("http://orders/x"), Target.of("10.0.0.1", 80).withId("a"))).isSameAs(first);
    assertThat(uris.routed(URI.create("http://orders/y"), Target.of("10.0.0.1", 80).withId("a")))
        .isEqualTo(URI.create("http://10.0.0.1:80/y"));
    assertThat(uris.routed(logical, Target.of("10.0.0.2", 81).withId("a"))).isEqualTo(URI.create("http://10.0.0.2:81/x"));
    uris.forget(Target.of("10.0.0.2", 81).withId("a"));
    assertThat(uris.size()).isZero();
  }

  @Test
  void routed_aHostNoUriCanHold_throwsUriSyntaxException() {
    assertThatThrownBy(() -> uris.routed(URI.create("http://orders/x"), Target.of("under_score", 80)))
        .isInstanceOf(URISyntaxException.class);
  }
}
