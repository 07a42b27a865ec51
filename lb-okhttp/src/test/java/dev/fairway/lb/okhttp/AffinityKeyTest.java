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

  /**
   * OkHttp's own {@code Request.header(name)} returns a repeated header's last value; the key is the
   * first, as {@code dev.fairway.lb.jdk.AffinityKey} ({@code HttpHeaders.firstValue}) and {@code
   * dev.fairway.lb.hc5.AffinityKey} ({@code getFirstHeader}) read it, so one request gives one key
   * through the three clients.
   */
  @Test
  void header_repeated_givesTheFirstValue_notOkHttpsLast() {
    AffinityKey key = AffinityKey.header("X-User");
    Request twice = request().addHeader("X-User", "alice").addHeader("x-user", "bob").build();
    assertThat(twice.header("X-User")).isEqualTo("bob");
    assertThat(key.apply(twice)).isEqualTo("alice");
    // The first value decides even when it is empty: no key, as through the other two clients.
    assertThat(key.apply(request().addHeader("X-User", "").addHeader("X-User", "bob").build())).isNull();
  }

  @Test
  void clientIp_repeatedHeaders_readsTheFirstOfEach() {
    Request r = request()
        .addHeader("X-Forwarded-For", "203.0.113.7, 10.0.0.1").addHeader("X-Forwarded-For", "10.0.0.2")
        .build();
    assertThat(AffinityKey.clientIp().apply(r)).isEqualTo("203.0.113.7");
    Request realIps = request().addHeader("X-Real-IP", "198.51.100.4").addHeader("X-Real-IP", "10.9.9.9").build();
    assertThat(AffinityKey.clientIp().apply(realIps)).isEqualTo("198.51.100.4");
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
