// The end of the code flow: trade the code for tokens, then back to the page that asked.
"use strict";
(async () => {
  const { manager, settings, sameOrigin, showError } = window.geocatalog;
  try {
    const signedIn = await manager.signinRedirectCallback();
    const back = signedIn.state && signedIn.state.returnTo;
    window.location.replace(back ? sameOrigin(back).href : settings.ui + "processes");
  } catch (e) {
    document.getElementById("signing-in").hidden = true;
    showError(document.getElementById("sign-in-error"), "Sign-in failed: " + e.message);
  }
})();
