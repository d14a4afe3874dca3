// The sign-in page: the server checks the token and sets it as an HttpOnly cookie.
"use strict";
(function () {
  const { config, api, message } = window.tcplab;
  document.getElementById("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = document.getElementById("token").value.trim();
    try {
      const body = await api("/login", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ token, next: config.next }),
      });
      // The server sends only a path of this site; a browser must never be sent elsewhere.
      const next = new URL(body.next, window.location.origin);
      window.location.assign(next.origin === window.location.origin ? next.href : "/dashboard");
    } catch (error) {
      message(error.status === 401 ? "That token is unknown, revoked or disabled." : String(error), "error");
    }
  });
})();
