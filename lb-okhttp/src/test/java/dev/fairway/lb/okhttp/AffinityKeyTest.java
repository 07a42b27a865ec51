package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import okhttp3.Request;
import org.junit.jupiter.api.Test;

class AffinityKeyTest {

  private static Request.Builder request() {
    return new Request.Builder().url("http://orders/x");
  }

  @Test
  void clientIp_takesFirstForwardedForHop() {
    Request r = request().header("X-Forwarded-For", " 203.0.113.7 , 10.0.0.1, 10.0.0.2").header("X-Real-IP", "10.9.9.9").build();
    assertThat(AffinityKey.clientIp().apply(r)).isEqualTo("203.0.113.7");
  }

  @Test
  void clientIp_fallsBackToRealIpThenNull() {
    assertThat(AffinityKey.clientIp().apply(request().header("X-Real-IP", "198.51.100.4").build())).isEqualTo("198.51.100.4");
    assertThat(AffinityKey.clientIp().apply(request().header("X-Forwarded-For", " ,10.0.0.1").header("X-Real-IP", "198.51.100.4").build()))
        .isEqualTo("198.51.100.4");
    assertThat(AffinityKey.clientIp().apply(request().build())).isNull();
  }

  @Test
  void header_returnsValueOrNullWhenAbsentOrEmpty() {
    AffinityKey key = AffinityKey.header("X-User");
    assertThat(key.apply(request().header("x-user", "alice").build())).isEqualTo("alice");
    assertThat(key.apply(request().header("X-User", "").build())).isNull();
    assertThat(key.apply(request().build())).isNull();
  }

  @Test
  void cookie_findsNamedCookieAcrossHeaders() {
    AffinityKey key = AffinityKey.cookie("session");
    assertThat(key.apply(request().header("Cookie", "a=1; session=abc; b=2").build())).isEqualTo("abc");
    assertThat(key.apply(request().header("Cookie", "session=\"q-1\"").build())).isEqualTo("q-1");
    assertThat(key.apply(request().addHeader("Cookie", "a=1").addHeader("Cookie", "session=z").build())).isEqualTo("z");
    assertThat(key.apply(request().header("Cookie", "xsession=no; sessionx=no").build())).isNull();
    assertThat(key.apply(request().header("Cookie", "session=").build())).isNull();
    assertThat(key.apply(request().build())).isNull();
  }

  @Test
  void factories_rejectBlankNames() {
    assertThatThrownBy(() -> AffinityKey.header(" ")).hasMessage("header: \" \" (expected: a non-blank header name)");
    assertThatThrownBy(() -> AffinityKey.cookie(null)).hasMessage("cookie: null (expected: a non-blank cookie name)");
    assertThatThrownBy(() -> AffinityKey.cookie("a=b")).hasMessage("cookie: \"a=b\" (expected: a non-blank cookie name)");
  }
}
